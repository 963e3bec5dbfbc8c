/**
 * Security rules as the Firebase Rules API keeps them: rulesets (immutable sources, all kept, so
 * the list is the history) and releases (a name, such as `cloud.firestore`, pointing at the
 * ruleset in force). Times are milliseconds since the epoch.
 */

export interface RulesSourceFile {
  name: string;
  content: string;
}

export interface RulesetRecord {
  projectId: string;
  rulesetId: string;
  files: RulesSourceFile[];
  createTime: number;
}

export interface ReleaseRecord {
  projectId: string;
  /** `cloud.firestore`, or `cloud.firestore/<database>` for a named database. */
  name: string;
  rulesetId: string;
  createTime: number;
  updateTime: number;
}

export interface RulesStore {
  createRuleset(ruleset: RulesetRecord): Promise<void>;
  getRuleset(projectId: string, rulesetId: string): Promise<RulesetRecord | undefined>;
  /** Newest first; `before` pages by create time. */
  listRulesets(projectId: string, limit: number, before?: number): Promise<RulesetRecord[]>;
  /** False when there was none. A ruleset some release points at is kept (and false returned). */
  deleteRuleset(projectId: string, rulesetId: string): Promise<boolean>;
  /** Creates or moves a release; the ruleset must exist (false otherwise). */
  putRelease(release: ReleaseRecord): Promise<boolean>;
  getRelease(projectId: string, name: string): Promise<ReleaseRecord | undefined>;
  listReleases(projectId: string): Promise<ReleaseRecord[]>;
  deleteRelease(projectId: string, name: string): Promise<boolean>;
}
