import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { ReleaseRecord, RulesetRecord, RulesSourceFile, RulesStore } from '../../storage/rules-store.js';
import type { DatabaseId } from '../core/paths.js';
import { firestoreErrors } from '../core/errors.js';
import { compileRules, serviceOf, type CompiledRules } from '../rules/index.js';

/** The release Firebase names for a database's Firestore rules (`firebase-admin`'s CLOUD_FIRESTORE). */
export function releaseNameFor(databaseId: string): string {
  return databaseId === '(default)' ? firestoreRelease : `${firestoreRelease}/${databaseId}`;
}

export const firestoreRelease = 'cloud.firestore';

/** Storage rules: `firebase.storage/<bucket>` for one bucket, `firebase.storage` for every bucket of the project. */
export const storageRelease = 'firebase.storage';

/** A storage ruleset's file (the one declaring `service firebase.storage`). */
export function storageFile(files: readonly RulesSourceFile[]): RulesSourceFile | undefined {
  return files.find((file) => serviceOf(file.content) === 'firebase.storage');
}

/** Compiled as the service its source declares. */
function compileFile(file: RulesSourceFile): CompiledRules {
  return compileRules(file.content, file.name, serviceOf(file.content));
}

/** A ruleset holds one or more files; the one declaring `service cloud.firestore` is the Firestore rules. */
export function firestoreFile(files: readonly RulesSourceFile[]): RulesSourceFile | undefined {
  return files.find((file) => /service\s+cloud\.firestore\b/.test(file.content)) ?? files[0];
}

/**
 * Which compiled rules are in force for each database. Rulesets and releases live in the store
 * (all rulesets are kept: they are the history); compiled forms are cached per ruleset, and a
 * project's releases are cached until something is deployed to it.
 */
export class RulesRegistry {
  private readonly compiled = new Map<string, CompiledRules>();
  private readonly releases = new Map<string, Promise<Map<string, ReleaseRecord>>>();
  /** Grows whenever this process releases rules or deletes a release: what was judged before may no longer hold. */
  private releasedGeneration = 0;
  private readonly reload: NodeJS.Timeout | undefined;

  /**
   * `reloadMs`: other processes release rules to the same store (instances on PostgreSQL, the
   * workers of --workers): the releases held are read again that often, and a change there counts
   * as a release here (Google's own releases take up to a minute to reach every server).
   */
  constructor(
    readonly store: RulesStore,
    private readonly logger: Logger,
    reloadMs?: number,
  ) {
    if (reloadMs !== undefined) {
      this.reload = setInterval(() => void this.reloadReleases(), reloadMs);
      this.reload.unref();
    }
  }

  /** Stops reading the releases again (see the constructor). */
  close(): void {
    clearInterval(this.reload);
  }

  /**
   * The rules for a database: its own release, else the project's `cloud.firestore` (what the
   * emulator endpoint deploys, for every database of the project); undefined when none.
   */
  async rulesFor(db: DatabaseId): Promise<CompiledRules | undefined> {
    const releases = await this.releasesOf(db.projectId);
    const release = releases.get(releaseNameFor(db.databaseId)) ?? releases.get(firestoreRelease);
    if (!release) return undefined;
    const key = `${db.projectId}/${release.rulesetId}`;
    let rules = this.compiled.get(key);
    if (!rules) {
      const ruleset = await this.store.getRuleset(db.projectId, release.rulesetId);
      const file = ruleset && firestoreFile(ruleset.files);
      if (!file) return undefined;
      rules = compileFile(file);
      this.compiled.set(key, rules);
    }
    return rules;
  }

  /**
   * The storage rules for a bucket: its own release, else the project's `firebase.storage` (what
   * the emulator endpoint and --storage-rules deploy); undefined when none.
   */
  async storageRulesFor(projectId: string, bucket: string): Promise<CompiledRules | undefined> {
    const releases = await this.releasesOf(projectId);
    const release = releases.get(`${storageRelease}/${bucket}`) ?? releases.get(storageRelease);
    if (!release) return undefined;
    const key = `${projectId}/${release.rulesetId}`;
    let rules = this.compiled.get(key);
    if (!rules) {
      const ruleset = await this.store.getRuleset(projectId, release.rulesetId);
      const file = ruleset && storageFile(ruleset.files);
      if (!file) return undefined;
      rules = compileFile(file);
      this.compiled.set(key, rules);
    }
    return rules.service === 'firebase.storage' ? rules : undefined;
  }

  /** Counts this process's releases; Listen targets judged at an older count are judged again (streams/listen-stream.ts). */
  get generation(): number {
    return this.releasedGeneration;
  }

  /** Compiles (throwing RulesCompileError with every issue) and keeps a new ruleset. */
  async createRuleset(projectId: string, files: RulesSourceFile[]): Promise<RulesetRecord> {
    const file = firestoreFile(files);
    const compiled = file ? compileFile(file) : undefined;
    const ruleset: RulesetRecord = { projectId, rulesetId: randomUUID(), files, createTime: Date.now() };
    await this.store.createRuleset(ruleset);
    if (compiled) this.compiled.set(`${projectId}/${ruleset.rulesetId}`, compiled);
    return ruleset;
  }

  /** Points a release at a ruleset; false when the ruleset does not exist. */
  async release(projectId: string, name: string, rulesetId: string): Promise<ReleaseRecord | undefined> {
    const ruleset = await this.store.getRuleset(projectId, rulesetId);
    const forStorage = name === storageRelease || name.startsWith(`${storageRelease}/`);
    const forFirestore = name === firestoreRelease || name.startsWith(`${firestoreRelease}/`);
    const holdsStorage = ruleset !== undefined && storageFile(ruleset.files) !== undefined;
    // A ruleset guards one service: storage rules never become a database's, nor the reverse.
    if (ruleset && ((forStorage && !holdsStorage) || (forFirestore && holdsStorage))) {
      throw firestoreErrors.invalidArgument(`Ruleset projects/${projectId}/rulesets/${rulesetId} does not declare the service release ${name} is for.`);
    }
    const now = Date.now();
    const existing = await this.store.getRelease(projectId, name);
    const release: ReleaseRecord = { projectId, name, rulesetId, createTime: existing?.createTime ?? now, updateTime: now };
    const done = await this.store.putRelease(release);
    this.releases.delete(projectId);
    this.releasedGeneration++;
    if (!done) return undefined;
    this.logger.info({ projectId, release: name, rulesetId }, 'security rules released');
    return release;
  }

  async deleteRelease(projectId: string, name: string): Promise<boolean> {
    const done = await this.store.deleteRelease(projectId, name);
    this.releases.delete(projectId);
    this.releasedGeneration++;
    return done;
  }

  /** Compile, keep and release in one step (the emulator endpoint, `--rules FILE`, the shipped default). */
  async deploy(projectId: string, files: RulesSourceFile[], name = firestoreRelease): Promise<RulesetRecord> {
    const ruleset = await this.createRuleset(projectId, files);
    await this.release(projectId, name, ruleset.rulesetId);
    return ruleset;
  }

  /** The releases of every project held here, as the store has them now; a change makes the rules judged again. */
  private async reloadReleases(): Promise<void> {
    for (const [projectId, held] of [...this.releases]) {
      try {
        const [before, now] = await Promise.all([held, this.store.listReleases(projectId)]);
        if (this.releases.get(projectId) !== held) continue; // released here meanwhile: that counted already
        const changed = now.length !== before.size || now.some((release) => before.get(release.name)?.rulesetId !== release.rulesetId);
        if (!changed) continue;
        this.releases.set(projectId, Promise.resolve(new Map(now.map((release) => [release.name, release]))));
        this.releasedGeneration++;
        this.logger.info({ projectId }, 'security rules released by another process');
      } catch {
        // The store is unreachable for now; the next round tries again.
      }
    }
  }

  private releasesOf(projectId: string): Promise<Map<string, ReleaseRecord>> {
    let releases = this.releases.get(projectId);
    if (!releases) {
      releases = this.store.listReleases(projectId).then((list) => new Map(list.map((release) => [release.name, release])));
      this.releases.set(projectId, releases);
      releases.catch(() => this.releases.delete(projectId));
    }
    return releases;
  }
}
