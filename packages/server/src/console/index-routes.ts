import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { CompositeIndex } from '../firestore/core/composite-indexes.js';
import { checkDatabase } from '../firestore/core/paths.js';
import type { VectorIndex } from '../firestore/core/vector-indexes.js';
import { requireOperator } from './console-gate.js';
import { consolePrefix } from './session-routes.js';

export interface ConsoleIndexDeps {
  compositeIndexes: readonly CompositeIndex[];
  vectorIndexes: readonly VectorIndex[];
  isOwnerCredential(request: FastifyRequest): boolean;
}

type IndexField =
  | { fieldPath: string; order: 'ASCENDING' | 'DESCENDING' }
  | { fieldPath: string; arrayConfig: 'CONTAINS' }
  | { fieldPath: string; vectorConfig: { dimension: number; flat: Record<string, never> } };

/** The Firestore Admin API's Index resource (v1), as `gcloud firestore indexes composite list` shows it. */
export interface AdminIndex {
  name: string;
  queryScope: 'COLLECTION' | 'COLLECTION_GROUP';
  fields: IndexField[];
  state: 'READY';
}

/**
 * `GET .../console/projects/{p}/databases/{d}/indexes`: the indexes of the --indexes file. They
 * are the server's, the same for every database; entries are built at startup, so each is READY.
 */
export function registerConsoleIndexRoutes(app: FastifyInstance, deps: ConsoleIndexDeps): void {
  app.get(`${consolePrefix}/projects/:project/databases/:database/indexes`, async (request) => {
    requireOperator(request, deps.isOwnerCredential);
    const { project, database } = request.params as { project: string; database: string };
    const db = checkDatabase(project, database);
    const parent = `projects/${db.projectId}/databases/${db.databaseId}`;
    return { indexes: declaredIndexes(parent, deps.compositeIndexes, deps.vectorIndexes) };
  });
}

export function declaredIndexes(parent: string, composites: readonly CompositeIndex[], vectors: readonly VectorIndex[]): AdminIndex[] {
  const named = (collectionGroup: string, key: string) => `${parent}/collectionGroups/${collectionGroup}/indexes/${indexId(key)}`;
  const fromComposites = composites.map((index): AdminIndex => ({
    name: named(index.collectionGroup, index.id),
    queryScope: index.queryScope,
    fields: index.fields.map((field) => (field.mode === 'CONTAINS' ? { fieldPath: field.path, arrayConfig: 'CONTAINS' } : { fieldPath: field.path, order: field.mode })),
    state: 'READY',
  }));
  const fromVectors = vectors.map((index): AdminIndex => {
    const key = `vi:${index.collectionGroup}:${index.queryScope}:${index.prefix.join(',')}:${index.vectorField}/${index.dimension}`;
    return {
      name: named(index.collectionGroup, key),
      queryScope: index.queryScope,
      fields: [...index.prefix.map((fieldPath) => ({ fieldPath, order: 'ASCENDING' as const })), { fieldPath: index.vectorField, vectorConfig: { dimension: index.dimension, flat: {} } }],
      state: 'READY',
    };
  });
  return [...fromComposites, ...fromVectors];
}

/** A short opaque id, as Google's (`CICAgOjXh4EK`), stable across restarts with the same file. */
function indexId(key: string): string {
  return createHash('sha256').update(key).digest('base64url').slice(0, 12);
}
