import { firestoreErrors } from './errors.js';
import { formatFieldPath, parseFieldPath } from './paths.js';
import { conjuncts, type Query } from './query.js';

/**
 * Vector indexes declared in firestore.indexes.json: an index whose last field has
 * `"vectorConfig": {"dimension": N, "flat": {}}`, after the fields of the equality pre-filters
 * it serves (ascending). Firestore answers findNearest only from such an index; so does Hearth
 * outside --dev (in --dev, as Google's emulator, any vector field can be searched).
 */
export interface VectorIndex {
  collectionGroup: string;
  queryScope: 'COLLECTION' | 'COLLECTION_GROUP';
  /** Paths of the pre-filter fields, canonical. */
  prefix: string[];
  vectorField: string;
  dimension: number;
}

export function isVectorIndexDeclaration(raw: unknown): boolean {
  const fields = (raw as { fields?: unknown } | null)?.fields;
  return Array.isArray(fields) && fields.some((field) => typeof field === 'object' && field !== null && 'vectorConfig' in field);
}

export function parseVectorIndex(raw: unknown, where: string): VectorIndex {
  const index = raw as { collectionGroup?: unknown; queryScope?: unknown; fields?: unknown };
  if (typeof index.collectionGroup !== 'string' || !Array.isArray(index.fields)) throw new Error(`${where} needs collectionGroup and fields`);
  const fields = index.fields as Array<{ fieldPath?: unknown; vectorConfig?: { dimension?: unknown; flat?: unknown } }>;
  const last = fields[fields.length - 1]!;
  if (fields.slice(0, -1).some((field) => field.vectorConfig !== undefined) || last.vectorConfig === undefined) {
    throw new Error(`${where}: the vector field (vectorConfig) must be the index's last field, and its only one`);
  }
  const dimension = Number(last.vectorConfig.dimension);
  if (!Number.isInteger(dimension) || dimension < 1 || dimension > 2048) throw new Error(`${where}: vectorConfig.dimension must be an integer from 1 to 2048`);
  if (typeof last.vectorConfig.flat !== 'object' || last.vectorConfig.flat === null) throw new Error(`${where}: vectorConfig needs "flat": {} (the only vector index type)`);
  const path = (field: { fieldPath?: unknown }) => {
    if (typeof field.fieldPath !== 'string') throw new Error(`${where}: every field needs a fieldPath`);
    return formatFieldPath(parseFieldPath(field.fieldPath));
  };
  return {
    collectionGroup: index.collectionGroup,
    queryScope: index.queryScope === 'COLLECTION_GROUP' ? 'COLLECTION_GROUP' : 'COLLECTION',
    // `__name__` may close the prefix (the Firebase CLI writes it); it filters nothing.
    prefix: fields.slice(0, -1).map(path).filter((p) => p !== '__name__'),
    vectorField: path(last),
    dimension,
  };
}

/**
 * Refuses (FAILED_PRECONDITION, production's message) a vector search no declared index serves:
 * same collection and scope, vector field and dimension, and the pre-filter's fields exactly.
 */
export function requireVectorIndex(indexes: readonly VectorIndex[], projectId: string, query: Query): void {
  const nearest = query.findNearest;
  if (!nearest) return;
  const scope = query.allDescendants ? 'COLLECTION_GROUP' : 'COLLECTION';
  const filtered = [...new Set(conjuncts(query.filter).flatMap((f) => (f.kind === 'composite' ? [] : f.field.isKey ? [] : [f.field.path])))].sort();
  const served = indexes.some(
    (index) =>
      index.collectionGroup === query.collectionId &&
      index.queryScope === scope &&
      index.vectorField === nearest.field.path &&
      index.dimension === nearest.queryVector.length &&
      [...index.prefix].sort().join('\u0000') === filtered.join('\u0000'),
  );
  if (served) return;
  const fieldConfigs = [
    ...filtered.map((path) => `--field-config=order=ASCENDING,field-path=${path}`),
    `--field-config=vector-config='{"dimension":"${nearest.queryVector.length}","flat": "{}"}',field-path=${nearest.field.path}`,
  ];
  throw firestoreErrors.failedPrecondition(
    `Missing vector index configuration. Please create the required index with the following gcloud command: gcloud firestore indexes composite create --project=${projectId} --collection-group=${query.collectionId ?? ''} --query-scope=${scope} ${fieldConfigs.join(' ')}`,
  );
}
