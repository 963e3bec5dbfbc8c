/** Raw REST calls to one Hearth's Firestore API as the admin, for tests that read exact wire answers. */
import assert from 'node:assert/strict';
import { postJson, type TestHearth } from './hearth.js';

export const int = (n: number) => ({ integerValue: String(n) });
export const str = (s: string) => ({ stringValue: s });
export const fieldFilter = (path: string, op: string, value: unknown) => ({ fieldFilter: { field: { fieldPath: path }, op, value } });

export interface QueryAnswer {
  document?: { name: string; fields?: Record<string, any> };
  explainMetrics?: any;
  transaction?: string;
}

export function firestoreRest(server: TestHearth) {
  const base = `${server.url}/v1/projects/${server.projectId}/databases/(default)/documents`;
  const name = (path: string) => `projects/${server.projectId}/databases/(default)/documents/${path}`;
  const headers = { authorization: 'Bearer owner' };
  return {
    name,
    set: (path: string, fields: Record<string, unknown>) => ({ update: { name: name(path), fields } }),
    remove: (path: string) => ({ delete: name(path) }),
    async commit(writes: unknown[]): Promise<void> {
      const answer = await postJson(`${base}:commit`, { writes }, headers);
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
    },
    /** Queries under `parent` (a document path, '' for the root). */
    async runQuery(structuredQuery: unknown, extra: Record<string, unknown> = {}, parent = ''): Promise<QueryAnswer[]> {
      const answer = await postJson(`${base}${parent ? `/${parent}` : ''}:runQuery`, { structuredQuery, ...extra }, headers);
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      return answer.body as QueryAnswer[];
    },
  };
}

/** The relative paths of a runQuery answer's documents, in order. */
export function pathsOf(server: TestHearth, answers: QueryAnswer[]): string[] {
  const prefix = `projects/${server.projectId}/databases/(default)/documents/`;
  return answers.filter((answer) => answer.document).map((answer) => answer.document!.name.slice(prefix.length));
}

/** What query explain (`explainOptions.analyze`) reports: the indexes chosen and the documents read. */
export function explained(answers: QueryAnswer[]): { indexesUsed: unknown[]; documentsScanned: number } {
  const metrics = answers[answers.length - 1]?.explainMetrics;
  assert.ok(metrics, 'the answer carries no explainMetrics');
  return { indexesUsed: metrics.planSummary.indexesUsed, documentsScanned: Number(metrics.executionStats.debugStats.documents_scanned) };
}
