import type { ReleaseRecord, RulesetRecord, RulesSourceFile, RulesStore } from '../rules-store.js';
import { applyPgMigrations, inPgTransaction, type PgPool } from './pg-connection.js';
import { rulesSchemaSteps } from './pg-identity-schema.js';
import { num } from './pg-rows.js';

interface RulesetRow {
  project_id: string;
  ruleset_id: string;
  create_time: string;
  source: string;
}
interface ReleaseRow {
  project_id: string;
  name: string;
  ruleset_id: string;
  create_time: string;
  update_time: string;
}

/**
 * Rulesets and releases on PostgreSQL. A release and the ruleset it points at are checked in one
 * transaction with the ruleset's row locked (FOR SHARE against FOR UPDATE), so one instance cannot
 * delete a ruleset another is releasing.
 */
export class PgRulesStore implements RulesStore {
  private constructor(private readonly pool: PgPool) {}

  static async open(pool: PgPool): Promise<PgRulesStore> {
    await applyPgMigrations(pool, 'rules', rulesSchemaSteps);
    return new PgRulesStore(pool);
  }

  async createRuleset(ruleset: RulesetRecord): Promise<void> {
    await this.pool.query('INSERT INTO rules_rulesets (project_id, ruleset_id, create_time, source) VALUES ($1, $2, $3, $4)', [
      ruleset.projectId,
      ruleset.rulesetId,
      ruleset.createTime,
      JSON.stringify(ruleset.files),
    ]);
  }

  async getRuleset(projectId: string, rulesetId: string): Promise<RulesetRecord | undefined> {
    const { rows } = await this.pool.query<RulesetRow>('SELECT * FROM rules_rulesets WHERE project_id = $1 AND ruleset_id = $2', [projectId, rulesetId]);
    return rows[0] ? rulesetFromRow(rows[0]) : undefined;
  }

  async listRulesets(projectId: string, limit: number, before = Number.MAX_SAFE_INTEGER): Promise<RulesetRecord[]> {
    const { rows } = await this.pool.query<RulesetRow>(
      'SELECT * FROM rules_rulesets WHERE project_id = $1 AND create_time < $2 ORDER BY create_time DESC, ruleset_id DESC LIMIT $3',
      [projectId, before, limit],
    );
    return rows.map(rulesetFromRow);
  }

  async deleteRuleset(projectId: string, rulesetId: string): Promise<boolean> {
    return inPgTransaction(this.pool, async (client) => {
      const locked = await client.query('SELECT 1 FROM rules_rulesets WHERE project_id = $1 AND ruleset_id = $2 FOR UPDATE', [projectId, rulesetId]);
      if (locked.rowCount !== 1) return false;
      const inUse = await client.query('SELECT 1 FROM rules_releases WHERE project_id = $1 AND ruleset_id = $2 LIMIT 1', [projectId, rulesetId]);
      if (inUse.rowCount !== 0) return false;
      await client.query('DELETE FROM rules_rulesets WHERE project_id = $1 AND ruleset_id = $2', [projectId, rulesetId]);
      return true;
    });
  }

  async putRelease(release: ReleaseRecord): Promise<boolean> {
    return inPgTransaction(this.pool, async (client) => {
      const found = await client.query('SELECT 1 FROM rules_rulesets WHERE project_id = $1 AND ruleset_id = $2 FOR SHARE', [release.projectId, release.rulesetId]);
      if (found.rowCount !== 1) return false;
      await client.query(
        'INSERT INTO rules_releases (project_id, name, ruleset_id, create_time, update_time) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (project_id, name) DO UPDATE SET ruleset_id = EXCLUDED.ruleset_id, update_time = EXCLUDED.update_time',
        [release.projectId, release.name, release.rulesetId, release.createTime, release.updateTime],
      );
      return true;
    });
  }

  async getRelease(projectId: string, name: string): Promise<ReleaseRecord | undefined> {
    const { rows } = await this.pool.query<ReleaseRow>('SELECT * FROM rules_releases WHERE project_id = $1 AND name = $2', [projectId, name]);
    return rows[0] ? releaseFromRow(rows[0]) : undefined;
  }

  async listReleases(projectId: string): Promise<ReleaseRecord[]> {
    const { rows } = await this.pool.query<ReleaseRow>('SELECT * FROM rules_releases WHERE project_id = $1 ORDER BY name', [projectId]);
    return rows.map(releaseFromRow);
  }

  async deleteRelease(projectId: string, name: string): Promise<boolean> {
    const result = await this.pool.query('DELETE FROM rules_releases WHERE project_id = $1 AND name = $2', [projectId, name]);
    return result.rowCount === 1;
  }
}

function rulesetFromRow(row: RulesetRow): RulesetRecord {
  return { projectId: row.project_id, rulesetId: row.ruleset_id, createTime: num(row.create_time), files: JSON.parse(row.source) as RulesSourceFile[] };
}

function releaseFromRow(row: ReleaseRow): ReleaseRecord {
  return { projectId: row.project_id, name: row.name, rulesetId: row.ruleset_id, createTime: num(row.create_time), updateTime: num(row.update_time) };
}
