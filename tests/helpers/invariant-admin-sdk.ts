/**
 * The server SDK (@google-cloud/firestore, the Firestore of firebase-admin) over gRPC as one caller, in the rules
 * invariant: its `customHeaders` put the caller's ID token (or none) where it would put the emulator's admin
 * `Bearer owner`. Query and document gets, getAll, count/sum/avg, findNearest, getPartitions, and read-only
 * transactions at a past read time, the SDK's own way; its answers are checked as CallerReads checks raw ones.
 */
import { AggregateField, FieldPath, Firestore, Timestamp, type DocumentSnapshot, type Query } from 'firebase-admin/firestore';
import type { CallerReads } from './invariant-reads.js';
import type { InvariantServer } from './invariant-servers.js';
import { fromSdkData, rfc3339 } from './invariant-wire.js';
import type { CallerName, QuerySpec } from './invariant-world.js';

export function adminSdkAs(server: InvariantServer, caller: CallerName): Firestore {
  const { hostname, port } = new URL(server.url);
  const token = server.tokens[caller];
  return new Firestore({
    projectId: server.projectId,
    host: hostname,
    port: Number(port),
    ssl: false,
    customHeaders: { Authorization: token === undefined ? '' : `Bearer ${token}` },
    // Never used to sign anything (the channel is insecure, the header above is the credential), but without any,
    // google-gax looks for default credentials on every new channel, down to the cloud metadata server (seconds).
    credentials: { client_email: 'invariant@example.invalid', private_key: 'unused' },
  });
}

/** A corpus query with the server SDK. */
export function sdkQuery(db: Firestore, spec: QuerySpec): Query {
  const scope = spec.scope;
  let query: Query = scope.kind === 'group' ? db.collectionGroup(scope.collectionId) : db.collection(scope.parent ? `${scope.parent}/${scope.collectionId}` : scope.collectionId);
  for (const filter of spec.filters) {
    if (filter.field === '__name__') query = query.where(FieldPath.documentId(), '==', db.doc(filter.path));
    else if (filter.op === 'in') query = query.where(filter.field, 'in', filter.values);
    else query = query.where(filter.field, filter.op, filter.value);
  }
  return spec.limit === undefined ? query : query.limit(spec.limit);
}

const micros = (timestamp: Timestamp) => timestamp.seconds * 1e6 + Math.floor(timestamp.nanoseconds / 1000);
const fromMicros = (time: number) => new Timestamp(Math.floor(time / 1e6), (time % 1e6) * 1000);

/**
 * Reads through the SDK; `checks` is a CallerReads of the same caller whose checks (not calls) are used. The SDK
 * retries a server-streaming call that fails before any response twice, with backoff (retry-request's "no
 * response" retries; seconds per refusal, against Google's emulator too), so only the requests the same caller's
 * raw gRPC twin (`answered`) had answered are made: a refused one delivers nothing anyway.
 */
export class AdminSdkReads {
  skipped = 0;

  constructor(
    private readonly db: Firestore,
    private readonly checks: CallerReads,
    private readonly answered: ReadonlyMap<string, boolean>,
  ) {}

  private answeredBefore(key: string): boolean {
    if (this.answered.get(key) === true) return true;
    this.skipped++;
    return false;
  }

  private shown(readPath: string, method: 'get' | 'list', request: string, snapshot: DocumentSnapshot, past: number | undefined): void {
    if (!snapshot.exists) return;
    this.checks.deliveredData(readPath, method, request, snapshot.ref.path, snapshot.updateTime ? rfc3339(micros(snapshot.updateTime)) : undefined, fromSdkData(snapshot.data()), past);
  }

  /** Answers the error code, or 'ok'. */
  private async attempt(body: () => Promise<void>): Promise<string> {
    this.checks.countRequest();
    try {
      await body();
      return 'ok';
    } catch (error) {
      return String((error as { code?: unknown }).code ?? error);
    }
  }

  async now(specs: readonly QuerySpec[], documents: readonly string[]): Promise<void> {
    const who = `admin SDK as ${this.checks.caller}`;
    for (const spec of specs) {
      const query = sdkQuery(this.db, spec);
      if (this.answeredBefore(`runQuery now ${spec.label}`)) {
        await this.attempt(async () => {
          for (const doc of (await query.get()).docs) this.shown('query.get()', 'list', `${who}: ${spec.label}.get()`, doc, undefined);
        });
      }
      if (!this.answeredBefore(`aggregate now ${spec.label}`)) continue;
      await this.attempt(async () => {
        const answer = await query.aggregate({ n: AggregateField.count(), s: AggregateField.sum('level'), a: AggregateField.average('level') }).get();
        this.checks.aggregated('aggregate().get()', `${who}: ${spec.label}.aggregate(count, sum, avg)`, spec, answer.data().n, micros(answer.readTime));
      });
    }
    for (const path of documents) {
      if (!this.answeredBefore(`get now ${path}`)) continue;
      await this.attempt(async () => this.shown('doc.get()', 'get', `${who}: doc(${path}).get()`, await this.db.doc(path).get(), undefined));
    }
    if (!this.answeredBefore('batchGet now')) return;
    await this.attempt(async () => {
      for (const doc of await this.db.getAll(...documents.map((path) => this.db.doc(path)))) this.shown('getAll()', 'get', `${who}: getAll(${documents.join(', ')})`, doc, undefined);
    });
  }

  /** findNearest over the round's posts (no pre-filter, or one of the declared equalities). */
  async findNearest(spec: QuerySpec, vector: [number, number]): Promise<void> {
    if (!this.answeredBefore(`findNearest now ${spec.label}`)) return;
    await this.attempt(async () => {
      const answer = await sdkQuery(this.db, spec).findNearest({ vectorField: 'embedding', queryVector: vector, limit: 4, distanceMeasure: 'EUCLIDEAN' }).get();
      for (const doc of answer.docs) this.shown('findNearest().get()', 'list', `admin SDK as ${this.checks.caller}: ${spec.label}.findNearest(${vector})`, doc, undefined);
    });
  }

  async partitions(collectionId: string): Promise<void> {
    if (!this.answeredBefore('partition now')) return;
    await this.attempt(async () => {
      const names: string[] = [];
      for await (const partition of this.db.collectionGroup(collectionId).getPartitions(4)) {
        for (const cursor of [partition.startAt, partition.endBefore]) if (cursor) names.push(...cursor.map((value) => (value as { path: string }).path));
      }
      this.checks.partitioned('getPartitions()', [...new Set(names)], Number.MAX_SAFE_INTEGER);
    });
  }

  /** A read-only transaction at a past read time: queries, documents and aggregates as of then. */
  async readOnlyAt(time: number, specs: readonly QuerySpec[], documents: readonly string[]): Promise<void> {
    const who = `admin SDK as ${this.checks.caller}: runTransaction(readOnly, readTime ${rfc3339(time)})`;
    for (const spec of specs) {
      if (!this.answeredBefore(`runQuery past ${spec.label}`) || !this.answeredBefore(`aggregate past ${spec.label}`)) continue;
      await this.attempt(() =>
        this.db.runTransaction(
          async (transaction) => {
            for (const doc of (await transaction.get(sdkQuery(this.db, spec))).docs) this.shown('read-only transaction at a past time: query', 'list', `${who}: get(${spec.label})`, doc, time);
            const answer = await transaction.get(sdkQuery(this.db, spec).count());
            this.checks.aggregated('read-only transaction at a past time: count', `${who}: get(${spec.label}.count())`, spec, answer.data().count, time, false);
          },
          { readOnly: true, readTime: fromMicros(time) },
        ),
      );
    }
    if (!this.answeredBefore('batchGet past')) return;
    await this.attempt(() =>
      this.db.runTransaction(
        async (transaction) => {
          for (const doc of await transaction.getAll(...documents.map((path) => this.db.doc(path)))) this.shown('read-only transaction at a past time: getAll', 'get', `${who}: getAll(${documents.join(', ')})`, doc, time);
        },
        { readOnly: true, readTime: fromMicros(time) },
      ),
    );
  }
}
