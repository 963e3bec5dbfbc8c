import type Database from 'better-sqlite3';
import type { ReleaseRecord, RulesetRecord, RulesSourceFile, RulesStore } from '../rules-store.js';

interface RulesetRow {
  project_id: string;
  ruleset_id: string;
  create_time: number;
  source: string;
}
interface ReleaseRow {
  project_id: string;
  name: string;
  ruleset_id: string;
  create_time: number;
  update_time: number;
}

/** Rulesets and releases in the same SQLite file as everything else (tables from migration 3). */
export class SqliteRulesStore implements RulesStore {
  private readonly statements;

  constructor(
    private readonly db: Database.Database,
    /** Waits until a write on this connection cannot wait for SQLite's lock (SqliteStore). */
    private readonly writeTurn: () => Promise<void> = async () => undefined,
  ) {
    this.statements = {
      insertRuleset: db.prepare('INSERT INTO rules_rulesets (project_id, ruleset_id, create_time, source) VALUES (?, ?, ?, ?)'),
      getRuleset: db.prepare<[string, string], RulesetRow>('SELECT * FROM rules_rulesets WHERE project_id = ? AND ruleset_id = ?'),
      listRulesets: db.prepare<[string, number, number], RulesetRow>(
        'SELECT * FROM rules_rulesets WHERE project_id = ? AND create_time < ? ORDER BY create_time DESC, ruleset_id DESC LIMIT ?',
      ),
      rulesetInUse: db.prepare<[string, string], { n: number }>('SELECT count(*) AS n FROM rules_releases WHERE project_id = ? AND ruleset_id = ?'),
      deleteRuleset: db.prepare('DELETE FROM rules_rulesets WHERE project_id = ? AND ruleset_id = ?'),
      putRelease: db.prepare(
        'INSERT INTO rules_releases (project_id, name, ruleset_id, create_time, update_time) VALUES (?, ?, ?, ?, ?) ON CONFLICT (project_id, name) DO UPDATE SET ruleset_id = excluded.ruleset_id, update_time = excluded.update_time',
      ),
      getRelease: db.prepare<[string, string], ReleaseRow>('SELECT * FROM rules_releases WHERE project_id = ? AND name = ?'),
      listReleases: db.prepare<[string], ReleaseRow>('SELECT * FROM rules_releases WHERE project_id = ? ORDER BY name'),
      deleteRelease: db.prepare('DELETE FROM rules_releases WHERE project_id = ? AND name = ?'),
    };
  }

  async createRuleset(ruleset: RulesetRecord): Promise<void> {
    await this.writeTurn();
    this.statements.insertRuleset.run(ruleset.projectId, ruleset.rulesetId, ruleset.createTime, JSON.stringify(ruleset.files));
  }

  async getRuleset(projectId: string, rulesetId: string): Promise<RulesetRecord | undefined> {
    const row = this.statements.getRuleset.get(projectId, rulesetId);
    return row ? rulesetFromRow(row) : undefined;
  }

  async listRulesets(projectId: string, limit: number, before = Number.MAX_SAFE_INTEGER): Promise<RulesetRecord[]> {
    return this.statements.listRulesets.all(projectId, before, limit).map(rulesetFromRow);
  }

  async deleteRuleset(projectId: string, rulesetId: string): Promise<boolean> {
    await this.writeTurn();
    return this.db.transaction(() => {
      if (this.statements.rulesetInUse.get(projectId, rulesetId)!.n > 0) return false;
      return this.statements.deleteRuleset.run(projectId, rulesetId).changes === 1;
    }).immediate();
  }

  async putRelease(release: ReleaseRecord): Promise<boolean> {
    await this.writeTurn();
    return this.db.transaction(() => {
      if (!this.statements.getRuleset.get(release.projectId, release.rulesetId)) return false;
      this.statements.putRelease.run(release.projectId, release.name, release.rulesetId, release.createTime, release.updateTime);
      return true;
    }).immediate();
  }

  async getRelease(projectId: string, name: string): Promise<ReleaseRecord | undefined> {
    const row = this.statements.getRelease.get(projectId, name);
    return row ? releaseFromRow(row) : undefined;
  }

  async listReleases(projectId: string): Promise<ReleaseRecord[]> {
    return this.statements.listReleases.all(projectId).map(releaseFromRow);
  }

  async deleteRelease(projectId: string, name: string): Promise<boolean> {
    await this.writeTurn();
    return this.statements.deleteRelease.run(projectId, name).changes === 1;
  }
}

function rulesetFromRow(row: RulesetRow): RulesetRecord {
  return { projectId: row.project_id, rulesetId: row.ruleset_id, createTime: row.create_time, files: JSON.parse(row.source) as RulesSourceFile[] };
}

function releaseFromRow(row: ReleaseRow): ReleaseRecord {
  return { projectId: row.project_id, name: row.name, rulesetId: row.ruleset_id, createTime: row.create_time, updateTime: row.update_time };
}
