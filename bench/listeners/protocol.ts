/** The messages between the listener bench (index.ts, beside the server) and its process of clients (clients.ts). */

/** One run of commits, each waited for until every listener has seen it. Times in ms. */
export interface CommitRun {
  /** Per listener and commit: from the commit's acknowledgement (the writer has its answer) to that listener's receipt of the document. */
  latencies: number[];
  /** The same, from just before the commit was sent. */
  fromSend: number[];
  /** Per commit: until the first listener's snapshot (the server has written them all by then, see latency.ts), and the last's. */
  first: number[];
  last: number[];
  /** Per commit: until the commit's own answer. */
  commit: number[];
  /** Snapshots that brought a commit's document to a listener, counted over all: must equal `expected`. */
  received: number;
  /** listeners × commits */
  expected: number;
  /** CPU time the client processes (listeners and writer) spent over the measured commits. */
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
  /** The client processes' resident memory, summed. */
  clientRss: number;
}

/** What one process of clients (clients.ts) does for the driver (driver.ts). */
export interface ClientOps {
  /** Opens `clients` more connections and `listeners` more Listen streams on `room`, spread over them in turn; waits until each is CURRENT. */
  open: { args: { room: string; listeners: number; clients: number }; result: { openMs: number; clientRss: number } };
  /** The writer: one REST commit of `room`'s document for `seq`; times on the shared clock (performance.timeOrigin + now()). */
  commit: { args: { room: string; seq: number }; result: { sentAt: number; ackAt: number } };
  /** Receipt times by commit since the last call, and the CPU this process spent since then. */
  take: { args: Record<string, never>; result: { arrivals: Record<number, number[]>; cpuMs: number } };
  close: { args: Record<string, never>; result: null };
}

/** Sent by a process of clients when every one of its listeners has commit `seq`, or when a listener failed. */
export type ClientEvent = { event: 'seen'; seq: number } | { event: 'failed'; error: string };

export type ClientRequest = { [K in keyof ClientOps]: { id: number; op: K; args: ClientOps[K]['args'] } }[keyof ClientOps];
export type ClientReply = { id: number; ok: true; result: unknown } | { id: number; ok: false; error: string };

