/** How many processes `hearth start` runs, and which one a client address is served by. */

import { addressKey } from '../http/address-key.js';
import { maxWorkers } from '../http/worker-relay.js';

export interface WorkerChoice {
  /** `--workers` as given; undefined: not given. */
  given: number | undefined;
  /** `--demo-idp`: the demo provider keeps its sign-ins in one process's memory. */
  demoIdp: boolean;
  /**
   * `--functions`: each process would run the code base with a credential only it knows, while the
   * code's firebase-admin calls reach whichever worker the primary hands them to.
   */
  functions?: boolean;
  /** The machine's cores, for the banner's suggestion. */
  cores: number;
}

export type WorkerCount = { count: number; note?: string } | { error: string };

export function workerCount(choice: WorkerChoice): WorkerCount {
  const oneProcessOnly = choice.demoIdp
    ? '--demo-idp keeps its sign-ins in one process'
    : choice.functions
      ? "--functions gives its code a credential only the process that runs it knows, and the code's calls to Hearth reach any worker"
      : undefined;
  if (choice.given !== undefined) {
    if (choice.given > maxWorkers) return { error: `--workers ${choice.given} cannot be served: at most ${maxWorkers} (a transaction id names its worker in one byte)` };
    if (choice.given > 1 && oneProcessOnly) return { error: `--workers ${choice.given} cannot be served: ${oneProcessOnly}; use --workers 1` };
    return { count: choice.given };
  }
  // One unless asked: on the 2-core machines measured (bench/workers.ts, PostgreSQL on the same
  // cores) two workers served fewer requests than one; see docs/ARCHITECTURE.md#workers.
  return { count: 1, note: oneProcessOnly ? `one process: ${oneProcessOnly}` : `one process (--workers ${Math.max(2, choice.cores)} for one per core)` };
}

/**
 * The worker (0-based) a client address is served by: FNV-1a of the address as the per-address
 * limits count it (http/address-key.ts: IPv4 written as IPv6 is the IPv4 address, an IPv6 address
 * its /64), so every connection of one client reaches the same worker, and what a worker counts in
 * memory per address (WebChannel sessions, transfers in flight) is the client's whole count.
 */
export function stickyWorker(address: string, workers: number): number {
  const key = addressKey(address);
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    hash ^= key.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % workers;
}
