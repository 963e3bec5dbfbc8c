import type { DocumentRow, VectorChange, VectorEntry } from '../../storage/document-store.js';
import { docFromRow, getField, type Doc } from './documents.js';
import { parseFieldPath } from './paths.js';
import { isNumber, isVector } from './values.js';
import type { VectorIndex } from './vector-indexes.js';

/**
 * The declared vector fields' side table (storage/document-store.ts VectorEntry), from the core's
 * side: which fields of which collections it holds, and a document's rows in it. A row holds what
 * findNearest's distance reads from the document (vector-search.ts distanceOf): the elements as
 * doubles (integers converted as distanceOf converts them), so a distance computed from the row is
 * the same double. A value that distanceOf would never rank (not a vector, an element that is not
 * a number, no elements) has no row.
 */

export interface VectorField {
  path: string;
  segments: string[];
}

/** Declared vector fields by collection id (either scope: rows are per collection). */
export type VectorFields = ReadonlyMap<string, readonly VectorField[]>;

export function declaredVectorFields(indexes: readonly VectorIndex[]): VectorFields {
  const fields = new Map<string, VectorField[]>();
  for (const index of indexes) {
    const list = fields.get(index.collectionGroup) ?? [];
    if (!list.some((field) => field.path === index.vectorField)) list.push({ path: index.vectorField, segments: parseFieldPath(index.vectorField) });
    fields.set(index.collectionGroup, list);
  }
  return fields;
}

/** What the side table holds, for the recorded index set: a change of it rebuilds the rows. */
export function vectorSetKeys(fields: VectorFields): string[] {
  return [...fields].flatMap(([collectionId, list]) => list.map((field) => `vector ${collectionId} ${field.path}`));
}

/** A document's rows: one per declared field holding a rankable vector. */
export function vectorEntriesOf(fields: VectorFields, doc: Doc): VectorEntry[] {
  const declared = fields.get(doc.key.collectionId);
  if (!declared) return [];
  const entries: VectorEntry[] = [];
  for (const field of declared) {
    const vector = vectorElements(getField(doc.fields, field.segments));
    if (vector) entries.push({ field: field.path, vector: Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength) });
  }
  return entries;
}

/** A stored document's rows (a rebuild), decoded only in a collection with declared vector fields. */
export function vectorEntriesOfRow(fields: VectorFields, row: DocumentRow): VectorEntry[] {
  return fields.has(row.collectionId) ? vectorEntriesOf(fields, docFromRow(row)) : [];
}

/** The rows a commit changes for one document, or undefined when they stay as they are. */
export function vectorChangeFor(fields: VectorFields, before: Doc | undefined, after: Doc | undefined): VectorChange | undefined {
  const key = (after ?? before)!.key;
  if (!fields.has(key.collectionId)) return undefined;
  const old = before ? vectorEntriesOf(fields, before) : [];
  const entries = after ? vectorEntriesOf(fields, after) : [];
  const changed = new Set<string>();
  for (const entry of entries) {
    const was = old.find((candidate) => candidate.field === entry.field);
    if (!was || !was.vector.equals(entry.vector)) changed.add(entry.field);
  }
  for (const entry of old) if (!entries.some((candidate) => candidate.field === entry.field)) changed.add(entry.field);
  if (changed.size === 0) return undefined;
  return { fields: [...changed], entries: entries.filter((entry) => changed.has(entry.field)) };
}

function vectorElements(value: ReturnType<typeof getField>): Float64Array | undefined {
  if (value === undefined || value.type !== 'map' || !isVector(value)) return undefined;
  const elements = value.fields.get('value');
  if (elements?.type !== 'array' || elements.values.length === 0) return undefined;
  const vector = new Float64Array(elements.values.length);
  for (let i = 0; i < vector.length; i++) {
    const item = elements.values[i]!;
    if (!isNumber(item)) return undefined;
    vector[i] = item.type === 'integer' ? Number(item.value) : item.value;
  }
  return vector;
}
