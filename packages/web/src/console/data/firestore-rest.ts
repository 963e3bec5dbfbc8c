import { consoleRequest, documentsPath } from '../api';
import type { FirestoreValue } from './values';

export interface RestDocument {
  name: string;
  fields?: Record<string, FirestoreValue>;
  createTime?: string;
  updateTime?: string;
}

/** Each path segment escaped on its own, so ids with spaces or odd characters survive the URL. */
export function encodePath(path: string): string {
  return path.split('/').filter(Boolean).map(encodeURIComponent).join('/');
}

export function segmentsOf(path: string): string[] {
  return path.split('/').filter(Boolean);
}

export function isDocumentPath(path: string): boolean {
  const count = segmentsOf(path).length;
  return count > 0 && count % 2 === 0;
}

/** The document path a REST name ends in (`projects/p/databases/d/documents/a/b` -> `a/b`). */
export function relativePath(name: string): string {
  return name.replace(/^projects\/[^/]+\/databases\/[^/]+\/documents\/?/, '');
}

export async function listCollectionIds(projectId: string, databaseId: string, documentPath: string): Promise<string[]> {
  const base = documentsPath(projectId, databaseId);
  const ids: string[] = [];
  let pageToken: string | undefined;
  do {
    const answer = await consoleRequest<{ collectionIds?: string[]; nextPageToken?: string }>(`${base}${documentPath ? `/${encodePath(documentPath)}` : ''}:listCollectionIds`, {
      body: { pageSize: 300, ...(pageToken ? { pageToken } : {}) },
    });
    ids.push(...(answer.collectionIds ?? []));
    pageToken = answer.nextPageToken;
  } while (pageToken && ids.length < 3000);
  return ids;
}

/**
 * A page of a collection's documents. showMissing adds the documents that only hold subcollections
 * (steps on the way to them), but costs a scan of the whole collection: asked for, not by default.
 */
export function listDocuments(projectId: string, databaseId: string, collectionPath: string, pageSize: number, pageToken: string | undefined, showMissing: boolean): Promise<{ documents?: RestDocument[]; nextPageToken?: string }> {
  const query = new URLSearchParams({ pageSize: String(pageSize), ...(showMissing ? { showMissing: 'true' } : {}), ...(pageToken ? { pageToken } : {}) });
  return consoleRequest(`${documentsPath(projectId, databaseId)}/${encodePath(collectionPath)}?${query}`);
}

export async function getDocument(projectId: string, databaseId: string, path: string): Promise<RestDocument | null> {
  try {
    return await consoleRequest<RestDocument>(`${documentsPath(projectId, databaseId)}/${encodePath(path)}`);
  } catch (error) {
    if (typeof error === 'object' && error !== null && (error as { status?: number }).status === 404) return null;
    throw error;
  }
}

/** Replaces the document's fields (no update mask: every field not sent is removed). */
export function saveDocument(projectId: string, databaseId: string, path: string, fields: Record<string, FirestoreValue>, mustExist: boolean): Promise<RestDocument> {
  const query = mustExist ? '?currentDocument.exists=true' : '?currentDocument.exists=false';
  return consoleRequest(`${documentsPath(projectId, databaseId)}/${encodePath(path)}${query}`, { method: 'PATCH', body: { fields } });
}

export function createDocument(projectId: string, databaseId: string, collectionPath: string, documentId: string, fields: Record<string, FirestoreValue>): Promise<RestDocument> {
  const query = documentId ? `?documentId=${encodeURIComponent(documentId)}` : '';
  return consoleRequest(`${documentsPath(projectId, databaseId)}/${encodePath(collectionPath)}${query}`, { body: { fields } });
}

export function deleteDocument(projectId: string, databaseId: string, path: string): Promise<unknown> {
  return consoleRequest(`${documentsPath(projectId, databaseId)}/${encodePath(path)}`, { method: 'DELETE' });
}

export interface QueryAnswer {
  documents: RestDocument[];
  plan?: { indexesUsed?: unknown[] };
  stats?: Record<string, unknown>;
}

export async function runQuery(projectId: string, databaseId: string, parentPath: string, structuredQuery: unknown): Promise<QueryAnswer> {
  const base = documentsPath(projectId, databaseId);
  const answers = await consoleRequest<{ document?: RestDocument; explainMetrics?: { planSummary?: { indexesUsed?: unknown[] }; executionStats?: Record<string, unknown> } }[]>(
    `${base}${parentPath ? `/${encodePath(parentPath)}` : ''}:runQuery`,
    { body: { structuredQuery, explainOptions: { analyze: true } } },
  );
  const documents = answers.flatMap((answer) => (answer.document ? [answer.document] : []));
  const metrics = answers.find((answer) => answer.explainMetrics)?.explainMetrics;
  return { documents, ...(metrics?.planSummary ? { plan: metrics.planSummary } : {}), ...(metrics?.executionStats ? { stats: metrics.executionStats } : {}) };
}
