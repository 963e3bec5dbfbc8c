/**
 * The listening clients, in a process of their own (index.ts forks it) so that the memory and CPU
 * the bench reads in its own process are the server's. A client is a firebase-admin Firestore
 * instance (gRPC) with a channel of its own (`grpc.use_local_subchannel_pool`: one connection per
 * client, not one shared by all); each onSnapshot is a Listen stream of its own. The writer commits
 * over REST and times, from just before each commit is sent, every listener's first snapshot that
 * holds the committed document.
 *
 * Started with the server as JSON in argv[2] ({name, origin, projectId}) and FIRESTORE_EMULATOR_HOST
 * set; answers the requests of protocol.ts over the IPC channel.
 */
import { runInNewContext } from 'node:vm';
import { setFlagsFromString } from 'node:v8';
import { Firestore, setLogFunction, type QuerySnapshot } from 'firebase-admin/firestore';
import { checkCommit, commitBody } from '../firestore/data.js';
import { post, type Endpoint } from '../firestore/targets.js';
import type { CommitRun, Ops, Reply, Request } from './protocol.js';

const server = JSON.parse(process.argv[2] ?? '{}') as Endpoint;
const collection = 'messages';
/** Per commit (and per opening step): a listener that has not seen it by then failed the run. */
const waitMs = 120_000;
/** Clients opened at once. */
const openBatch = 100;
/**
 * Commits write documents `{room}-0` … `{room}-19` in turn (added, then modified), so a query's
 * result, and what the server keeps per listener, stays the same size however many commits run.
 */
const slots = 20;

setLogFunction(null);
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

function newClient(): Firestore {
  return new Firestore({ projectId: server.projectId, 'grpc.use_local_subchannel_pool': 1 });
}

/** The listeners of one query `room == name`, and what each has seen. */
class Room {
  private readonly seen: Map<number, number>[] = [];
  private readonly unsubscribes: (() => void)[] = [];
  private firstSnapshots = 0;
  /** Listeners that have seen each commit, by sequence number. */
  private readonly arrivals = new Map<number, number>();
  private problem: Error | undefined;
  private wake: (() => void) | undefined;
  private nextSeq = 0;

  constructor(readonly name: string) {}

  get size(): number {
    return this.seen.length;
  }

  /** Adds a listener; `ready` waits for the first snapshot of every listener. */
  listen(db: Firestore): void {
    const seen = new Map<number, number>();
    let first = true;
    const onSnapshot = (snapshot: QuerySnapshot) => {
      const now = performance.now();
      if (first) {
        // What was there before it listened; no commit is in flight while listeners join.
        first = false;
        this.firstSnapshots++;
      } else {
        for (const change of snapshot.docChanges()) {
          const seq = change.doc.get('seq') as number;
          if (change.type === 'removed' || seen.has(seq)) this.fail(new Error(`a listener of ${this.name} saw commit ${seq} ${change.type === 'removed' ? 'removed' : 'again'}`));
          seen.set(seq, now);
          this.arrivals.set(seq, (this.arrivals.get(seq) ?? 0) + 1);
        }
      }
      this.wake?.();
    };
    this.seen.push(seen);
    this.unsubscribes.push(db.collection(collection).where('room', '==', this.name).onSnapshot(onSnapshot, (error) => this.fail(error)));
  }

  async ready(): Promise<void> {
    await this.until(() => this.firstSnapshots === this.seen.length, () => `${this.firstSnapshots} of ${this.seen.length} listeners had their first snapshot`);
  }

  /** `commits` commits one after another, each waited for until every listener saw it. */
  async commits(commits: number): Promise<CommitRun> {
    const run: CommitRun = { latencies: [], last: [], commit: [], received: 0, expected: this.seen.length * commits, clientCpuMs: 0 };
    const cpu = process.cpuUsage();
    for (let i = 0; i < commits; i++) {
      const { seq, sentAt, answeredAt } = await this.commitOnce();
      run.commit.push(answeredAt - sentAt);
      let last = 0;
      for (const seen of this.seen) {
        const at = seen.get(seq)!;
        seen.delete(seq);
        run.latencies.push(at - sentAt);
        last = Math.max(last, at - sentAt);
      }
      run.received += this.arrivals.get(seq) ?? 0;
      this.arrivals.delete(seq);
      run.last.push(last);
    }
    const used = process.cpuUsage(cpu);
    run.clientCpuMs = (used.user + used.system) / 1000;
    return run;
  }

  private async commitOnce(): Promise<{ seq: number; sentAt: number; answeredAt: number }> {
    const seq = this.nextSeq++;
    const fields = { room: { stringValue: this.name }, seq: { integerValue: String(seq) }, text: { stringValue: `message ${seq} to ${this.name}` } };
    const body = commitBody(server, collection, [{ id: `${this.name}-${seq % slots}`, fields }]);
    const sentAt = performance.now();
    const answer = await post(server, ':commit', body);
    const answeredAt = performance.now();
    checkCommit(server, answer, 1);
    await this.until(() => (this.arrivals.get(seq) ?? 0) === this.seen.length, () => `${this.arrivals.get(seq) ?? 0} of ${this.seen.length} listeners saw commit ${seq}`);
    return { seq, sentAt, answeredAt };
  }

  close(): void {
    for (const unsubscribe of this.unsubscribes.splice(0)) unsubscribe();
  }

  private fail(error: Error): void {
    this.problem ??= error;
    this.wake?.();
  }

  private async until(done: () => boolean, state: () => string): Promise<void> {
    const deadline = performance.now() + waitMs;
    while (!done()) {
      if (this.problem) throw this.problem;
      if (performance.now() > deadline) throw new Error(`${this.name}: after ${waitMs / 1000} s only ${state()}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 1000);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    if (this.problem) throw this.problem;
  }
}

let rooms = 0;
let room = new Room(`room${rooms}`);
const clients: Firestore[] = [];

const handlers: { [K in keyof Ops]: (args: Ops[K]['args']) => Promise<Ops[K]['result']> } = {
  async open({ listeners, clients: count }) {
    const began = performance.now();
    const added = Array.from({ length: count }, newClient);
    clients.push(...added);
    for (let i = 0; i < listeners; i += openBatch) {
      for (let j = i; j < Math.min(listeners, i + openBatch); j++) room.listen(added[j % count]!);
      await room.ready();
    }
    const openMs = performance.now() - began;
    gc();
    const memory = process.memoryUsage();
    return { clients: clients.length, listeners: room.size, openMs, clientRss: memory.rss, clientHeap: memory.heapUsed };
  },
  commits: ({ commits }) => room.commits(commits),
  async close() {
    room.close();
    await Promise.all(clients.splice(0).map((db) => db.terminate()));
    room = new Room(`room${++rooms}`);
    return null;
  },
};

process.on('message', (request: Request) => {
  const handler = handlers[request.op] as (args: unknown) => Promise<unknown>;
  handler(request.args).then(
    (result) => process.send!({ id: request.id, ok: true, result } satisfies Reply),
    (error: unknown) => process.send!({ id: request.id, ok: false, error: error instanceof Error ? (error.stack ?? error.message) : String(error) } satisfies Reply),
  );
});
// The bench ended without closing this process (a crash, Ctrl-C): end with it.
process.on('disconnect', () => process.exit(0));
process.send!('ready');
