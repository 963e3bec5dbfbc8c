/** The messages between the listener bench (index.ts, beside the server) and its process of clients (clients.ts). */

/** One run of commits, each waited for until every listener has seen it. Times in ms. */
export interface CommitRun {
  /** Per listener and commit: from just before the commit was sent to that listener's snapshot holding it. */
  latencies: number[];
  /** Per commit: until the last listener's snapshot. */
  last: number[];
  /** Per commit: until the commit's own answer. */
  commit: number[];
  /** Snapshots that brought a commit's document to a listener, counted over all: must equal `expected`. */
  received: number;
  /** listeners × commits */
  expected: number;
  /** CPU time the client process spent over the measured commits. */
  clientCpuMs: number;
}

export interface Ops {
  /** Opens `clients` more clients and `listeners` more listeners on the current query, spread over them in turn. */
  open: { args: { listeners: number; clients: number }; result: Opened };
  /** `commits` commits to the current query, one after another, each waited for until every listener has seen it. */
  commits: { args: { commits: number }; result: CommitRun };
  /** Closes every listener and client; the next ones listen to a new query. */
  close: { args: Record<string, never>; result: null };
}

export interface Opened {
  /** Clients and listeners now open, every listener with its first snapshot. */
  clients: number;
  listeners: number;
  /** The time it took to open the ones this call added. */
  openMs: number;
  /** The client process's own memory, after a collection. */
  clientRss: number;
  clientHeap: number;
}

export type Request = { [K in keyof Ops]: { id: number; op: K; args: Ops[K]['args'] } }[keyof Ops];
export type Reply = { id: number; ok: true; result: unknown } | { id: number; ok: false; error: string };
