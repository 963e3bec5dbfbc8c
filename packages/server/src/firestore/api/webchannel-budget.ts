/**
 * What WebChannel sessions hold for clients that have not acknowledged it, bounded per session,
 * per client address and in total, so that a client that opens sessions and never reads (or never
 * acknowledges) spends its own share and nobody else's. Past a bound the session holding the most
 * is ended with RESOURCE_EXHAUSTED, which the SDK answers by backing off and opening a new stream
 * (a Listen resumes from its last token): the flooder's sessions go first, a well-behaved
 * session, which acknowledges as it reads, holds little.
 *
 * Characters are UTF-16 code units of the arrays kept for re-sending. Beside them a back channel
 * buffers at most one write of 64 Ki characters and what its connection holds (writes wait for
 * the connection to take the previous one: webchannel-session.ts), so memory stays within a
 * small multiple of the bounds whatever the client acknowledges.
 */
export interface QueueLimits {
  /** One session. */
  perSession: number;
  /** All sessions of one client address (IPv6: one /64), the administrator's excepted. */
  perAddress: number;
  /** Every session. */
  total: number;
}

/** What the budget needs of a session. */
export interface QueueHolder {
  /** The address it counts against; undefined for the administrator's. */
  readonly address: string | undefined;
  /** Characters kept now. */
  readonly queuedChars: number;
  /** Ends the session for holding too much (RESOURCE_EXHAUSTED); its queue is released. */
  evict(): void;
}

export class QueueBudget {
  private total = 0;
  private readonly byAddress = new Map<string, { chars: number; holders: Set<QueueHolder> }>();
  private readonly holders = new Set<QueueHolder>();

  constructor(readonly limits: QueueLimits) {}

  get totalChars(): number {
    return this.total;
  }

  add(holder: QueueHolder): void {
    this.holders.add(holder);
    if (holder.address === undefined) return;
    let entry = this.byAddress.get(holder.address);
    if (!entry) this.byAddress.set(holder.address, (entry = { chars: 0, holders: new Set() }));
    entry.holders.add(holder);
  }

  /** A session's queue changed by `delta` characters (it is already counted in its queuedChars). */
  change(holder: QueueHolder, delta: number): void {
    this.total += delta;
    if (holder.address === undefined) return;
    const entry = this.byAddress.get(holder.address);
    if (entry) entry.chars += delta;
  }

  /** The session is gone: whatever it still counted is released. */
  remove(holder: QueueHolder): void {
    if (!this.holders.delete(holder)) return;
    this.change(holder, -holder.queuedChars);
    if (holder.address === undefined) return;
    const entry = this.byAddress.get(holder.address);
    if (!entry) return;
    entry.holders.delete(holder);
    if (entry.holders.size === 0) this.byAddress.delete(holder.address);
  }

  /** After `holder` grew: end the largest sessions of its address, then of all, until both are within bounds. */
  enforce(holder: QueueHolder): void {
    const entry = holder.address === undefined ? undefined : this.byAddress.get(holder.address);
    while (entry && entry.chars > this.limits.perAddress && this.evictLargest(entry.holders));
    while (this.total > this.limits.total && this.evictLargest(this.holders));
  }

  /** Ends the session of `holders` that holds the most; false if that freed nothing (all are ended already). */
  private evictLargest(holders: Iterable<QueueHolder>): boolean {
    let largest: QueueHolder | undefined;
    for (const candidate of holders) if (candidate.queuedChars > (largest?.queuedChars ?? 0)) largest = candidate;
    if (!largest) return false;
    const before = largest.queuedChars;
    largest.evict();
    return largest.queuedChars < before;
  }
}
