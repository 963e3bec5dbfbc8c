import { readFileSync } from 'node:fs';
import type { CompositeIndex, CompositeIndexField } from './composite-indexes.js';
import { formatFieldPath, parseFieldPath } from './paths.js';
import { isVectorIndexDeclaration, parseVectorIndex, type VectorIndex } from './vector-indexes.js';

/**
 * The declared indexes of a `firestore.indexes.json` file (the Firebase CLI's format), as apps
 * deployed to Firebase already have them:
 * - `indexes`: composite indexes, of collection or collection-group scope;
 * - `fieldOverrides`: their COLLECTION_GROUP entries become one-field collection-group indexes
 *   (production answers a filtered or ordered collection-group query only with one). Their
 *   COLLECTION entries are not needed: every field is indexed at collection scope, and an
 *   exemption that turns a field's indexes off is not applied (queries on it keep working).
 */
export function loadIndexFile(file: string): CompositeIndex[] {
  const parsed = JSON.parse(readFileSync(file, 'utf8')) as { indexes?: unknown; fieldOverrides?: unknown };
  // Vector indexes are read by loadVectorIndexFile: they have no entries to build.
  const composites = Array.isArray(parsed.indexes)
    ? parsed.indexes.flatMap((raw, i) => (isVectorIndexDeclaration(raw) ? [] : [parseIndex(raw, `${file}: indexes[${i}]`)]))
    : [];
  const overrides = Array.isArray(parsed.fieldOverrides) ? parsed.fieldOverrides.flatMap((raw, i) => parseOverride(raw, `${file}: fieldOverrides[${i}]`)) : [];
  // An index declared twice (say, as a one-field group index and as an override) is one index.
  return [...new Map([...composites, ...overrides].map((index) => [index.id, index])).values()];
}

/** The file's vector indexes (fields ending with a `vectorConfig`), for findNearest. */
export function loadVectorIndexFile(file: string): VectorIndex[] {
  const parsed = JSON.parse(readFileSync(file, 'utf8')) as { indexes?: unknown };
  if (!Array.isArray(parsed.indexes)) return [];
  return parsed.indexes.flatMap((raw, i) => (isVectorIndexDeclaration(raw) ? [parseVectorIndex(raw, `${file}: indexes[${i}]`)] : []));
}

function parseIndex(raw: unknown, where: string): CompositeIndex {
  const index = raw as { collectionGroup?: unknown; queryScope?: unknown; fields?: unknown };
  if (typeof index.collectionGroup !== 'string' || !Array.isArray(index.fields) || index.fields.length === 0) {
    throw new Error(`${where} needs collectionGroup and fields`);
  }
  const fields = index.fields.map((field: unknown) => {
    const { fieldPath, ...mode } = (field ?? {}) as { fieldPath?: unknown; order?: unknown; arrayConfig?: unknown };
    if (typeof fieldPath !== 'string') throw new Error(`${where}: every field needs a fieldPath`);
    return indexField(fieldPath, mode, where);
  });
  return indexOf(index.collectionGroup, index.queryScope === 'COLLECTION_GROUP' ? 'COLLECTION_GROUP' : 'COLLECTION', fields);
}

function parseOverride(raw: unknown, where: string): CompositeIndex[] {
  const override = (raw ?? {}) as { collectionGroup?: unknown; fieldPath?: unknown; indexes?: unknown };
  if (typeof override.collectionGroup !== 'string' || typeof override.fieldPath !== 'string') throw new Error(`${where} needs collectionGroup and fieldPath`);
  if (override.indexes !== undefined && !Array.isArray(override.indexes)) throw new Error(`${where}: indexes must be a list`);
  const { collectionGroup, fieldPath } = override;
  return ((override.indexes ?? []) as unknown[])
    .map((entry) => (entry ?? {}) as { queryScope?: unknown; order?: unknown; arrayConfig?: unknown })
    .filter((entry) => entry.queryScope === 'COLLECTION_GROUP')
    .map((entry) => indexOf(collectionGroup, 'COLLECTION_GROUP', [indexField(fieldPath, entry, where)]));
}

function indexField(fieldPath: string, config: { order?: unknown; arrayConfig?: unknown }, where: string): CompositeIndexField {
  const mode = config.arrayConfig === 'CONTAINS' ? 'CONTAINS' : config.order === 'DESCENDING' ? 'DESCENDING' : config.order === 'ASCENDING' ? 'ASCENDING' : undefined;
  if (!mode) throw new Error(`${where}: field ${fieldPath} needs order ASCENDING/DESCENDING or arrayConfig CONTAINS`);
  const segments = parseFieldPath(fieldPath);
  return { path: formatFieldPath(segments), segments, mode };
}

function indexOf(collectionGroup: string, queryScope: CompositeIndex['queryScope'], fields: CompositeIndexField[]): CompositeIndex {
  const id = `ci:${collectionGroup}:${queryScope}:${fields.map((f) => `${f.path}/${f.mode}`).join(',')}`;
  return { id, collectionGroup, queryScope, fields };
}
