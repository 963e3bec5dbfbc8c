/**
 * One caller's reads in the rules invariant, on every read path of REST and gRPC: get, batchGet, list, runQuery,
 * aggregations (count, sum, avg), findNearest, partitionQuery; now, at a past read time, in a read-write
 * transaction, in a read-only transaction begun at a past time (apart or inline with newTransaction). Every
 * document answered goes to the ledger; what answers carry without documents is checked here: an aggregate may
 * only cover documents the caller may list, a partition cursor may only name one, and a read at a past time must
 * answer the version of that time.
 */
import { postJson } from './hearth.js';
import { RawGrpc } from './invariant-grpc.js';
import type { History, Ledger } from './invariant-ledger.js';
import { queryParentPath, structuredQuery } from './invariant-queries.js';
import { judge } from './invariant-rules.js';
import { authorizationOf, databaseName, documentName, type InvariantServer } from './invariant-servers.js';
import { fromWireFields, micros, rfc3339, vectorValue } from './invariant-wire.js';
import { canonicalData, queryResults, sameData, type CallerName, type DocData, type QuerySpec, type Round } from './invariant-world.js';

type Json = Record<string, any>;

/** How a read is made consistent: now, at a read time, inside a transaction, or beginning one inline. */
export type Consistency = { kind: 'now' } | { kind: 'readTime'; time: number } | { kind: 'transaction'; id: string; readOnlyAt?: number } | { kind: 'newReadOnly'; time: number };

function consistencyFields(consistency: Consistency): Json {
  switch (consistency.kind) {
    case 'now':
      return {};
    case 'readTime':
      return { readTime: rfc3339(consistency.time) };
    case 'transaction':
      return { transaction: consistency.id };
    case 'newReadOnly':
      return { newTransaction: { readOnly: { readTime: rfc3339(consistency.time) } } };
  }
}

/** The past time a read must see, if it reads the past. */
function pastTime(consistency: Consistency): number | undefined {
  if (consistency.kind === 'readTime' || consistency.kind === 'newReadOnly') return consistency.time;
  if (consistency.kind === 'transaction') return consistency.readOnlyAt;
  return undefined;
}

function consistencyLabel(consistency: Consistency): string {
  switch (consistency.kind) {
    case 'now':
      return '';
    case 'readTime':
      return ' readTime';
    case 'transaction':
      return consistency.readOnlyAt !== undefined ? ' in read-only transaction at a past time' : ' in read-write transaction';
    case 'newReadOnly':
      return ' newTransaction readOnly at a past time';
  }
}

export const aggregations = [
  { alias: 'n', count: {} },
  { alias: 's', sum: { field: { fieldPath: 'level' } } },
  { alias: 'a', avg: { field: { fieldPath: 'level' } } },
];

/** now, past (a read time or a read-only transaction at one), or rw (a read-write transaction). */
export function momentOf(consistency: Consistency): 'now' | 'past' | 'rw' {
  if (consistency.kind === 'now') return 'now';
  return pastTime(consistency) === undefined ? 'rw' : 'past';
}

/** One caller's reads on one server over one transport. */
export class CallerReads {
  private readonly grpc: RawGrpc | undefined;
  /** Which requests were answered: `runQuery now <query>`, `aggregate past <query>`, `get now <path>`, ... */
  readonly outcomes = new Map<string, boolean>();

  constructor(
    readonly server: InvariantServer,
    readonly round: Round,
    readonly caller: CallerName,
    /** rest or grpc: the raw calls; another name (an SDK's) when only the checks are used. */
    readonly transport: string,
    private readonly ledger: Ledger,
    private readonly history: History,
  ) {
    if (transport === 'grpc') this.grpc = new RawGrpc(server.hostPort, databaseName(server), authorizationOf(server, caller));
  }

  close(): void {
    this.grpc?.close();
  }

  private get base(): string {
    return `${this.server.url}/v1/${databaseName(this.server)}/documents`;
  }

  private headers(): Record<string, string> {
    const authorization = authorizationOf(this.server, this.caller);
    return authorization ? { authorization } : {};
  }

  /** A REST POST or a gRPC call (server-streaming ones answer the list of their responses). */
  private async call(verb: string, restPath: string, body: Json, grpcMethod: string, streaming: boolean): Promise<{ ok: boolean; value: any; status: string }> {
    this.ledger.requests++;
    if (this.grpc) {
      const answer = streaming ? await this.grpc.stream(grpcMethod, body) : await this.grpc.unary(grpcMethod, body);
      return { ok: answer.ok, value: answer.value, status: answer.ok ? 'OK' : `gRPC ${answer.code} ${answer.message}` };
    }
    const answer = await postJson(`${this.base}${restPath}:${verb}`, body, this.headers());
    return { ok: answer.status === 200, value: answer.body, status: answer.status === 200 ? 'OK' : `${answer.status} ${JSON.stringify(answer.body).slice(0, 160)}` };
  }

  private pathOf(name: string): string {
    return name.slice(`${databaseName(this.server)}/documents/`.length);
  }

  countRequest(): void {
    this.ledger.requests++;
  }

  /** Judges a delivered document (proto3 JSON). */
  delivered(readPath: string, method: 'get' | 'list', request: string, wire: Json, past: number | undefined): void {
    this.deliveredData(readPath, method, request, this.pathOf(String(wire.name)), wire.updateTime, fromWireFields(wire.fields), past);
  }

  /** Judges a delivered version, and at a past time checks it is that time's version. */
  deliveredData(readPath: string, method: 'get' | 'list', request: string, document: string, updateTime: string | undefined, data: DocData, past: number | undefined): void {
    this.ledger.deliver({ round: this.round, caller: this.caller, transport: this.transport, path: readPath, method, request, document, updateTime, data });
    if (past === undefined) return;
    const then = this.history.at(document, past);
    if (!sameData(then, data)) {
      this.ledger.breach({
        kind: 'a read at a past time answered another version than that time’s',
        round: this.round,
        caller: this.caller,
        transport: this.transport,
        path: readPath,
        document,
        detail: `${request}\n    answered ${canonicalData(data)}; at ${rfc3339(past)} it was ${canonicalData(then)}`,
      });
    }
  }

  async get(path: string, consistency: Consistency): Promise<void> {
    const past = pastTime(consistency);
    const readPath = `get${consistencyLabel(consistency)}`;
    const request = `${this.transport} get ${path}${past !== undefined ? ` at ${rfc3339(past)}` : ''} as ${this.caller}`;
    this.ledger.requests++;
    let document: Json | undefined;
    if (this.grpc) {
      const answer = await this.grpc.unary('GetDocument', { name: documentName(this.server, path), ...consistencyFields(consistency) });
      document = answer.ok ? answer.value : undefined;
    } else {
      const fields = consistencyFields(consistency);
      const query = Object.entries(fields)
        .filter(([, value]) => typeof value === 'string')
        .map(([key, value]) => `${key}=${encodeURIComponent(value as string)}`)
        .join('&');
      const response = await fetch(`${this.base}/${path}${query ? `?${query}` : ''}`, { headers: this.headers() });
      document = response.status === 200 ? ((await response.json()) as Json) : (await response.text(), undefined);
    }
    this.outcomes.set(`get ${momentOf(consistency)} ${path}`, document !== undefined);
    if (document) this.delivered(readPath, 'get', request, document, past);
  }

  async batchGet(paths: readonly string[], consistency: Consistency): Promise<void> {
    const past = pastTime(consistency);
    const body = { documents: paths.map((path) => documentName(this.server, path)), ...consistencyFields(consistency) };
    const answer = await this.call('batchGet', '', body, 'BatchGetDocuments', true);
    this.outcomes.set(`batchGet ${momentOf(consistency)}`, answer.ok);
    if (!answer.ok) return;
    const request = `${this.transport} batchGet [${paths.join(', ')}]${consistencyLabel(consistency)} as ${this.caller}`;
    for (const response of answer.value as Json[]) if (response.found) this.delivered(`batchGet${consistencyLabel(consistency)}`, 'get', request, response.found, past);
  }

  /** ListDocuments of a collection (a whole collection: `list` on each document). */
  async list(parent: string, collectionId: string, consistency: Consistency): Promise<void> {
    const past = pastTime(consistency);
    const request = `${this.transport} list ${parent ? `${parent}/` : ''}${collectionId}${consistencyLabel(consistency)} as ${this.caller}`;
    this.ledger.requests++;
    let documents: Json[] = [];
    if (this.grpc) {
      const answer = await this.grpc.unary('ListDocuments', { parent: parent ? documentName(this.server, parent) : `${databaseName(this.server)}/documents`, collectionId, pageSize: 300, ...consistencyFields(consistency) });
      documents = answer.ok ? ((answer.value?.documents as Json[]) ?? []) : [];
    } else {
      const readTime = consistency.kind === 'readTime' ? `&readTime=${encodeURIComponent(rfc3339(consistency.time))}` : consistency.kind === 'transaction' ? `&transaction=${encodeURIComponent(consistency.id)}` : '';
      const response = await fetch(`${this.base}/${parent ? `${parent}/` : ''}${collectionId}?pageSize=300${readTime}`, { headers: this.headers() });
      documents = response.status === 200 ? (((await response.json()) as Json).documents ?? []) : (await response.text(), []);
    }
    for (const document of documents) this.delivered(`list${consistencyLabel(consistency)}`, 'list', request, document, past);
  }

  async runQuery(spec: QuerySpec, consistency: Consistency, extra: Json = {}, label = 'runQuery'): Promise<string | undefined> {
    const past = pastTime(consistency);
    const body = { parent: this.parentOf(spec), structuredQuery: structuredQuery(this.server, spec, extra), ...consistencyFields(consistency) };
    const answer = await this.call('runQuery', queryParentPath(spec), body, 'RunQuery', true);
    this.outcomes.set(`${label} ${momentOf(consistency)} ${spec.label}`, answer.ok);
    if (!answer.ok) return undefined;
    const request = `${this.transport} ${label} ${spec.label}${extra.findNearest ? ' findNearest' : ''}${consistencyLabel(consistency)}${past !== undefined ? ` at ${rfc3339(past)}` : ''} as ${this.caller}`;
    let transaction: string | undefined;
    for (const response of answer.value as Json[]) {
      if (response.transaction) transaction = response.transaction;
      if (response.document) this.delivered(`${label}${consistencyLabel(consistency)}`, 'list', request, response.document, past);
    }
    return transaction;
  }

  /** count, sum and avg of a query: when answered, every document it covered must be one the caller may list. */
  async aggregate(spec: QuerySpec, consistency: Consistency): Promise<void> {
    const past = pastTime(consistency);
    const body = { parent: this.parentOf(spec), structuredAggregationQuery: { structuredQuery: structuredQuery(this.server, spec), aggregations }, ...consistencyFields(consistency) };
    const answer = await this.call('runAggregationQuery', queryParentPath(spec), body, 'RunAggregationQuery', true);
    this.outcomes.set(`aggregate ${momentOf(consistency)} ${spec.label}`, answer.ok);
    if (!answer.ok) return;
    const result = (answer.value as Json[]).find((response) => response.result);
    if (!result) return;
    const time = past ?? micros(String(result.readTime));
    const request = `${this.transport} count/sum/avg of ${spec.label}${consistencyLabel(consistency)} at ${rfc3339(time)} as ${this.caller}`;
    this.aggregated(`aggregation${consistencyLabel(consistency)}`, request, spec, Number(result.result.aggregateFields.n.integerValue), time);
  }

  /**
   * An aggregate answered `count` for `spec` at `time`: every document it covered must be one the caller may list.
   * `overLevel`: it aggregated `level` too, so it covered the matching documents that have it.
   */
  aggregated(readPath: string, request: string, spec: QuerySpec, count: number, time: number, overLevel = true): void {
    const covered = queryResults(spec, this.history.snapshot(time), overLevel ? 'level' : undefined);
    const denied = covered.filter((path) => !judge(this.round.rules, this.round.names, 'list', this.caller, path, this.history.at(path, time)!));
    if (denied.length) {
      this.ledger.breach({
        kind: 'an aggregate covered documents the caller may not list',
        round: this.round,
        caller: this.caller,
        transport: this.transport,
        path: readPath,
        document: denied[0],
        detail: `${request}\n    answered count ${count} over [${covered.join(', ')}]; denied to ${this.caller}: ${denied.map((path) => `${path} ${canonicalData(this.history.at(path, time))}`).join(', ')}`,
      });
    }
    if (count !== covered.length) {
      this.ledger.breach({ kind: 'an aggregate differs from the documents of its time', round: this.round, caller: this.caller, transport: this.transport, path: readPath, detail: `${request}\n    answered count ${count}, the documents then: [${covered.join(', ')}]` });
    }
    this.ledger.versions += covered.length;
    this.ledger.checked.set(`${this.transport} ${readPath} (documents covered)`, (this.ledger.checked.get(`${this.transport} ${readPath} (documents covered)`) ?? 0) + covered.length);
  }

  /** findNearest over the round's posts, with no pre-filter or an equality the vector indexes declare. */
  async findNearest(spec: QuerySpec, vector: [number, number], consistency: Consistency): Promise<void> {
    const findNearest = { vectorField: { fieldPath: 'embedding' }, queryVector: vectorValue(vector), distanceMeasure: 'EUCLIDEAN', limit: 4 };
    await this.runQuery(spec, consistency, { findNearest }, 'findNearest');
  }

  /**
   * PartitionQuery over the round's notes group: its cursors name documents, which must be documents the caller
   * may list (at the read time).
   */
  async partition(consistency: Consistency): Promise<void> {
    const past = pastTime(consistency);
    const structured = { from: [{ collectionId: this.round.names.notes, allDescendants: true }], orderBy: [{ field: { fieldPath: '__name__' }, direction: 'ASCENDING' }] };
    const body = { parent: `${databaseName(this.server)}/documents`, structuredQuery: structured, partitionCount: 4, ...(past !== undefined ? { readTime: rfc3339(past) } : {}) };
    const answer = await this.call('partitionQuery', '', body, 'PartitionQuery', false);
    this.outcomes.set(`partition ${momentOf(consistency)}`, answer.ok);
    if (!answer.ok) return;
    const names = ((answer.value.partitions as Json[]) ?? []).flatMap((partition) => ((partition.values as Json[]) ?? []).map((value) => this.pathOf(String(value.referenceValue))));
    this.partitioned(`partitionQuery${past !== undefined ? ' readTime' : ''}`, names, past ?? Number.MAX_SAFE_INTEGER);
  }

  /** Partition cursors named `paths` as of `time`: each must be a document the caller may list. */
  partitioned(readPath: string, paths: readonly string[], time: number): void {
    const key = `${this.transport} ${readPath} (names)`;
    for (const path of paths) {
      const data = this.history.at(path, time);
      this.ledger.versions++;
      this.ledger.checked.set(key, (this.ledger.checked.get(key) ?? 0) + 1);
      if (data && judge(this.round.rules, this.round.names, 'list', this.caller, path, data)) continue;
      this.ledger.breach({
        kind: 'a partition cursor named a document the caller may not list',
        round: this.round,
        caller: this.caller,
        transport: this.transport,
        path: readPath,
        document: path,
        detail: `${this.transport} partitionQuery group(${this.round.names.notes}) as ${this.caller}\n    named ${path} ${canonicalData(data)}`,
      });
    }
  }

  async begin(readOnlyAt?: number): Promise<string | undefined> {
    const options = readOnlyAt === undefined ? {} : { options: { readOnly: { readTime: rfc3339(readOnlyAt) } } };
    const answer = await this.call('beginTransaction', '', options, 'BeginTransaction', false);
    return answer.ok ? String(answer.value.transaction) : undefined;
  }

  async rollback(transaction: string): Promise<void> {
    await this.call('rollback', '', { transaction }, 'Rollback', false);
  }

  /**
   * A commit whose only write is `verify` of a document: Firestore judges it as a `get` of that document, so a
   * caller who may not get it must be refused whatever the document's state (else the answer tells whether it
   * exists, and its update time).
   */
  async verify(path: string): Promise<void> {
    const data = this.history.at(path, Number.MAX_SAFE_INTEGER);
    const mayGet = judgeMissingAware(this.round, this.caller, path, data);
    for (const currentDocument of [{ exists: true }, { exists: false }]) {
      const answer = await this.call('commit', '', { writes: [{ verify: documentName(this.server, path), currentDocument }] }, 'Commit', false);
      if (mayGet || /PERMISSION_DENIED|^403|gRPC 7 /.test(answer.status)) continue;
      this.ledger.breach({
        kind: 'a verify write answered about a document the caller may not get',
        round: this.round,
        caller: this.caller,
        transport: this.transport,
        path: 'commit verify',
        document: path,
        detail: `${this.transport} commit [verify ${path} exists=${currentDocument.exists}] as ${this.caller}\n    answered ${answer.ok ? 'OK' : answer.status}; the document is ${canonicalData(data)}`,
      });
    }
  }

  private parentOf(spec: QuerySpec): string {
    return spec.scope.kind === 'collection' && spec.scope.parent ? documentName(this.server, spec.scope.parent) : `${databaseName(this.server)}/documents`;
  }
}

/** `get` of a document that may not exist: the rules see no `resource` (its fields are errors). */
export function judgeMissingAware(round: Round, caller: CallerName, path: string, data: ReturnType<History['at']>): boolean {
  if (data) return judge(round.rules, round.names, 'get', caller, path, data);
  // Without the document, only conditions that read no field can hold: judged on an empty document, whose every
  // field read is an error, as reading resource.data of a missing document is.
  return judge(round.rules, round.names, 'get', caller, path, {});
}
