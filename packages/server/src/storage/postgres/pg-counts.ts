import type { OverviewCounts } from '../overview-counts.js';
import type { PgPool } from './pg-connection.js';

export function pgCounts(pool: PgPool): OverviewCounts {
  return {
    async users(projectId, createdSince) {
      const { rows } = await pool.query<{ total: string; recent: string }>(
        "SELECT COUNT(*) AS total, COUNT(*) FILTER (WHERE (record::jsonb ->> 'createdAt')::bigint >= $2) AS recent FROM users WHERE project_id = $1",
        [projectId, createdSince],
      );
      return { total: Number(rows[0]!.total), createdSince: Number(rows[0]!.recent) };
    },
    async documents(dbKey) {
      const { rows } = await pool.query<{ total: string }>('SELECT COUNT(*) AS total FROM fs_documents WHERE db = $1', [dbKey]);
      return Number(rows[0]!.total);
    },
  };
}
