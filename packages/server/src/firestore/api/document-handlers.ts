import { randomBytes } from 'node:crypto';
import type { DocumentDatabase } from '../core/database.js';
import { docToWire } from '../core/documents.js';
import { firestoreErrors } from '../core/errors.js';
import { documentKey, fullName, parseFieldPath, type DatabaseId } from '../core/paths.js';
import { compareSegment } from '../core/values.js';
import { parsePrecondition, parseWrite, type Write } from '../core/writes.js';
import type { RequestJudge } from '../security/guard.js';
import { readConsistency, type Consistency } from './read-consistency.js';

/** Single-document REST calls: GET (get or list), POST (create), PATCH, and the URL parameters they take. */
export type QueryParams = Record<string, string | string[] | undefined>;
export type Body = Record<string, unknown>;

export function list(raw: string | string[] | undefined): string[] {
  return raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
}

export function single(raw: string | string[] | undefined, name: string): string | undefined {
  if (Array.isArray(raw)) throw firestoreErrors.invalidArgument(`Parameter ${name} may be given only once.`);
  return raw;
}

export function maskFrom(paths: unknown): string[][] | undefined {
  if (paths === undefined) return undefined;
  if (!Array.isArray(paths) || paths.some((p) => typeof p !== 'string')) throw firestoreErrors.invalidArgument('mask.fieldPaths must be a list of field paths.');
  return (paths as string[]).map(parseFieldPath);
}

export function preconditionFrom(query: QueryParams): Pick<Write, 'precondition'> {
  const exists = single(query['currentDocument.exists'], 'currentDocument.exists');
  const updateTime = single(query['currentDocument.updateTime'], 'currentDocument.updateTime');
  if (exists !== undefined && updateTime !== undefined) throw firestoreErrors.invalidArgument('Precondition must set exactly one of exists or updateTime.');
  if (exists !== undefined) {
    if (exists !== 'true' && exists !== 'false') throw firestoreErrors.invalidArgument('currentDocument.exists must be true or false.');
    return { precondition: { exists: exists === 'true' } };
  }
  if (updateTime !== undefined) {
    return { precondition: parsePrecondition({ updateTime }, 'currentDocument') };
  }
  return {};
}

export async function getDocument(database: DocumentDatabase, judge: RequestJudge, db: DatabaseId, path: string, query: QueryParams): Promise<unknown> {
  const key = documentKey(path);
  const consistency = await consistencyFrom(database, judge, db, query);
  // Judged on the version read, before the transaction (if any) records it.
  const docs = await database.getDocuments(db, [key.path], consistency, (found) => judge.get([key.path], found));
  const doc = docs.get(key.path);
  if (!doc) throw firestoreErrors.notFound(`Document "${fullName(db, key.path)}" not found.`);
  return docToWire(db, doc, queryMask(query));
}

export async function listDocuments(database: DocumentDatabase, judge: RequestJudge, db: DatabaseId, segments: string[], query: QueryParams): Promise<unknown> {
  const collectionId = segments[segments.length - 1]!;
  const parent = segments.slice(0, -1).join('/');
  const requestedPageSize = Number(single(query.pageSize, 'pageSize') ?? 0);
  const pageSize = requestedPageSize === 0 ? 300 : requestedPageSize;
  const pageToken = single(query.pageToken, 'pageToken');
  const offset = pageToken ? Number(Buffer.from(pageToken, 'base64url').toString()) : 0;
  if (!Number.isInteger(offset) || offset < 0 || !Number.isInteger(pageSize) || pageSize < 0) throw firestoreErrors.invalidArgument('Invalid page size or page token.');
  const orderBy = (single(query.orderBy, 'orderBy') ?? '')
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part) => {
      const [field, direction] = part.split(/\s+/);
      return { field: { fieldPath: field }, direction: direction?.toLowerCase() === 'desc' ? 'DESCENDING' : 'ASCENDING' };
    });
  const mask = queryMask(query);
  const showMissing = single(query.showMissing, 'showMissing') === 'true';
  let entries: unknown[];
  if (showMissing) {
    // Missing documents have no fields to order by: showMissing lists everything by name.
    if (orderBy.length) throw firestoreErrors.invalidArgument('showMissing cannot be combined with orderBy.');
    const everything = database.parseQuery(db, parent, { from: [{ collectionId }] });
    const consistency = await consistencyFrom(database, judge, db, query);
    const { docs } = await database.runQuery(db, everything, consistency, await judge.query(everything, consistency.readTime));
    const collection = segments.join('/');
    const missing = (await database.missingDocumentIds(db, collection, consistency.readTime)).map((id) => ({ id, wire: { name: fullName(db, `${collection}/${id}`) } as unknown }));
    const present = docs.map((doc) => ({ id: doc.key.id, wire: docToWire(db, doc, mask) as unknown }));
    entries = [...present, ...missing].sort((a, b) => compareSegment(a.id, b.id)).slice(offset, offset + pageSize + 1).map((entry) => entry.wire);
  } else {
    const parsed = database.parseQuery(db, parent, { from: [{ collectionId }], orderBy, offset, limit: pageSize + 1 });
    const consistency = await consistencyFrom(database, judge, db, query);
    entries = (await database.runQuery(db, parsed, consistency, await judge.query(parsed, consistency.readTime))).docs.map((doc) => docToWire(db, doc, mask));
  }
  const answer: { documents?: unknown[]; nextPageToken?: string } = {};
  if (entries.length) answer.documents = entries.slice(0, pageSize);
  if (entries.length > pageSize) answer.nextPageToken = Buffer.from(String(offset + pageSize)).toString('base64url');
  return answer;
}

export async function patchDocument(database: DocumentDatabase, judge: RequestJudge, db: DatabaseId, path: string, query: QueryParams, body: Body): Promise<unknown> {
  const key = documentKey(path);
  const document = { ...body, name: fullName(db, key.path) };
  const updateMask = query['updateMask.fieldPaths'];
  const write = parseWrite(db, { update: document, ...(updateMask !== undefined ? { updateMask: { fieldPaths: list(updateMask) } } : {}) }, 'document');
  Object.assign(write, preconditionFrom(query));
  return writtenDocument(database, judge, db, write, query);
}

export async function createDocument(database: DocumentDatabase, judge: RequestJudge, db: DatabaseId, segments: string[], query: QueryParams, body: Body): Promise<unknown> {
  if (segments.length % 2 !== 1) throw firestoreErrors.invalidArgument('Documents are created in a collection.');
  if (body.name !== undefined) throw firestoreErrors.invalidArgument('Document name must not be set when creating a document.');
  const id = single(query.documentId, 'documentId') || autoId();
  const key = documentKey([...segments, id].join('/'));
  const write = parseWrite(db, { update: { ...body, name: fullName(db, key.path) }, currentDocument: { exists: false } }, 'document');
  return writtenDocument(database, judge, db, write, query);
}

/** `transaction` or `readTime` in the URL: which snapshot a GET reads. */
function consistencyFrom(database: DocumentDatabase, judge: RequestJudge, db: DatabaseId, query: QueryParams): Promise<Consistency> {
  const transaction = single(query.transaction, 'transaction');
  const readTime = single(query.readTime, 'readTime');
  return readConsistency(database, db, { ...(transaction !== undefined ? { transaction } : {}), ...(readTime !== undefined ? { readTime } : {}) }, judge.caller);
}

/** Commits one update and answers with the document exactly as that commit left it. */
async function writtenDocument(database: DocumentDatabase, judge: RequestJudge, db: DatabaseId, write: Write, query: QueryParams): Promise<unknown> {
  const { documents } = await database.commit(db, [write], undefined, judge.writes({ batch: false }));
  return docToWire(db, documents.get(write.key.path)!, queryMask(query));
}

function queryMask(query: QueryParams): string[][] | undefined {
  return maskFrom(query['mask.fieldPaths'] === undefined ? undefined : list(query['mask.fieldPaths']));
}

const autoIdAlphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** 20 characters like the SDKs' auto ids (rejection sampling keeps them uniform). */
export function autoId(): string {
  let id = '';
  while (id.length < 20) {
    for (const byte of randomBytes(40)) {
      if (byte < 248 && id.length < 20) id += autoIdAlphabet[byte % 62];
    }
  }
  return id;
}

