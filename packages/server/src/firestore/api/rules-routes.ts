import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../../http/api-error.js';
import { mayUseOpenEmulatorEndpoint } from '../../http/browser-origin.js';
import type { ReleaseRecord, RulesetRecord, RulesSourceFile } from '../../storage/rules-store.js';
import { firestoreErrors } from '../core/errors.js';
import { onlyKeys, wireObject } from '../core/wire-checks.js';
import { RulesCompileError } from '../rules/index.js';
import type { RulesRegistry } from '../security/rules-registry.js';

export interface RulesRoutesDeps {
  registry: RulesRegistry;
  /** Is this `Authorization` header an administrator of the project (the admin key, or a service account of it)? */
  isAdmin(authorization: string | undefined, projectId: string): Promise<boolean>;
  /** --dev: the emulator endpoint is open, as Google's emulator's is (rules-unit-testing sends no credential). */
  dev: boolean;
}

/** Google's limit on a ruleset's source. */
const maxSourceBytes = 256 * 1024;
const rulesApi = '/firebaserules.googleapis.com/v1/projects/:project';

/**
 * Deploying security rules: Google's emulator endpoint (`PUT /emulator/v1/projects/{p}:securityRules`,
 * what firebase-tools and @firebase/rules-unit-testing call) and the Firebase Rules API that
 * firebase-admin's `securityRules()` uses (rulesets and releases).
 */
export async function registerRulesRoutes(root: FastifyInstance, deps: RulesRoutesDeps): Promise<void> {
  await root.register(async (app) => routes(app, deps));
}

function routes(app: FastifyInstance, deps: RulesRoutesDeps): void {
  const { registry } = deps;
  // rules-unit-testing PUTs its JSON without a content type (fetch then says text/plain), and a
  // DELETE or GET may name a JSON content type with no body at all.
  const json = app.getDefaultJsonParser('error', 'error');
  const parse = (request: FastifyRequest, body: string | Buffer, done: (error: Error | null, value?: unknown) => void) => {
    if (body.length === 0) done(null, {});
    else json(request, body.toString(), done);
  };
  app.addContentTypeParser('text/plain', { parseAs: 'string', bodyLimit: 2 * maxSourceBytes }, parse);
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: 2 * maxSourceBytes }, parse);
  const requireAdmin = async (request: FastifyRequest) => {
    const { project } = request.params as { project: string };
    if (request.consoleOperator) return;
    if (!(await deps.isAdmin(request.headers.authorization, project))) throw new ApiError(403, 'The caller does not have permission', 'PERMISSION_DENIED');
  };

  // The project id stops at the verb's colon (a plain :project param would swallow it).
  app.put('/emulator/v1/projects/:project(^[^:/]+)::securityRules', async (request) => {
    if (!mayUseOpenEmulatorEndpoint(request, deps.dev)) await requireAdmin(request);
    const { project } = request.params as { project: string };
    const body = wireObject(request.body ?? {}, 'body');
    onlyKeys(body, ['rules', 'ignore_errors', 'ignoreErrors'], 'body');
    const files = sourceFiles(body.rules, 'rules');
    try {
      await registry.deploy(project, files);
      return {};
    } catch (error) {
      if (!(error instanceof RulesCompileError)) throw error;
      // firebase-tools asks to be told the issues rather than fail; the rules in force stay.
      if (body.ignore_errors === true || body.ignoreErrors === true) return { issues: error.issues.map((issue) => wireIssue(files[0]!.name, issue)) };
      throw firestoreErrors.invalidArgument(error.message);
    }
  });

  app.post(`${rulesApi}/rulesets`, async (request) => {
    await requireAdmin(request);
    const { project } = request.params as { project: string };
    const body = wireObject(request.body ?? {}, 'ruleset');
    onlyKeys(body, ['name', 'source', 'createTime', 'metadata', 'attachmentPoint'], 'ruleset');
    const files = sourceFiles(body.source, 'source');
    try {
      return rulesetToWire(await registry.createRuleset(project, files), true);
    } catch (error) {
      if (error instanceof RulesCompileError) throw firestoreErrors.invalidArgument(error.message);
      throw error;
    }
  });

  app.get(`${rulesApi}/rulesets`, async (request) => {
    await requireAdmin(request);
    const { project } = request.params as { project: string };
    const query = request.query as { pageSize?: string; pageToken?: string };
    const pageSize = query.pageSize === undefined ? 100 : Number(query.pageSize);
    if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 100) throw firestoreErrors.invalidArgument('Page size must be between 1 and 100.');
    const before = query.pageToken ? Number(Buffer.from(query.pageToken, 'base64url').toString()) : undefined;
    if (before !== undefined && !Number.isSafeInteger(before)) throw firestoreErrors.invalidArgument('Invalid page token.');
    const page = await registry.store.listRulesets(project, pageSize + 1, before);
    const answer: { rulesets: unknown[]; nextPageToken?: string } = { rulesets: page.slice(0, pageSize).map((ruleset) => rulesetToWire(ruleset, false)) };
    if (page.length > pageSize) answer.nextPageToken = Buffer.from(String(page[pageSize - 1]!.createTime)).toString('base64url');
    return answer;
  });

  app.get(`${rulesApi}/rulesets/:ruleset`, async (request) => {
    await requireAdmin(request);
    const { project, ruleset } = request.params as { project: string; ruleset: string };
    const found = await registry.store.getRuleset(project, ruleset);
    if (!found) throw firestoreErrors.notFound(`Ruleset projects/${project}/rulesets/${ruleset} not found.`);
    return rulesetToWire(found, true);
  });

  app.delete(`${rulesApi}/rulesets/:ruleset`, async (request) => {
    await requireAdmin(request);
    const { project, ruleset } = request.params as { project: string; ruleset: string };
    if (!(await registry.store.getRuleset(project, ruleset))) throw firestoreErrors.notFound(`Ruleset projects/${project}/rulesets/${ruleset} not found.`);
    if (!(await registry.store.deleteRuleset(project, ruleset))) throw firestoreErrors.failedPrecondition(`Ruleset projects/${project}/rulesets/${ruleset} is referenced by a release.`);
    return {};
  });

  app.get(`${rulesApi}/releases`, async (request) => {
    await requireAdmin(request);
    const { project } = request.params as { project: string };
    return { releases: (await registry.store.listReleases(project)).map(releaseToWire) };
  });

  app.post(`${rulesApi}/releases`, async (request) => {
    await requireAdmin(request);
    const { project } = request.params as { project: string };
    const wire = wireObject(request.body ?? {}, 'release');
    const { name, rulesetId } = releaseTarget(project, wire);
    if (await registry.store.getRelease(project, name)) throw firestoreErrors.alreadyExists(`Release projects/${project}/releases/${name} already exists.`);
    return releaseToWire(await releaseOrFail(registry, project, name, rulesetId));
  });

  app.get(`${rulesApi}/releases/*`, async (request) => {
    await requireAdmin(request);
    const { project, name } = releaseParams(request);
    const release = await registry.store.getRelease(project, name);
    if (!release) throw firestoreErrors.notFound(`Release projects/${project}/releases/${name} not found.`);
    return releaseToWire(release);
  });

  app.patch(`${rulesApi}/releases/*`, async (request) => {
    await requireAdmin(request);
    const { project, name } = releaseParams(request);
    const body = wireObject(request.body ?? {}, 'body');
    onlyKeys(body, ['release', 'updateMask'], 'body');
    const target = releaseTarget(project, wireObject(body.release, 'release'));
    if (target.name !== name) throw firestoreErrors.invalidArgument(`The release's name must be projects/${project}/releases/${name}.`);
    if (!(await registry.store.getRelease(project, name))) throw firestoreErrors.notFound(`Release projects/${project}/releases/${name} not found.`);
    return releaseToWire(await releaseOrFail(registry, project, name, target.rulesetId));
  });

  app.delete(`${rulesApi}/releases/*`, async (request) => {
    await requireAdmin(request);
    const { project, name } = releaseParams(request);
    if (!(await registry.deleteRelease(project, name))) throw firestoreErrors.notFound(`Release projects/${project}/releases/${name} not found.`);
    return {};
  });
}

function sourceFiles(raw: unknown, where: string): RulesSourceFile[] {
  const source = wireObject(raw, where);
  onlyKeys(source, ['files'], where);
  if (!Array.isArray(source.files) || source.files.length === 0) throw firestoreErrors.invalidArgument(`${where}.files must list at least one file.`);
  let total = 0;
  return source.files.map((rawFile, i) => {
    const file = wireObject(rawFile, `${where}.files[${i}]`);
    onlyKeys(file, ['name', 'content', 'fingerprint'], `${where}.files[${i}]`);
    if (typeof file.content !== 'string') throw firestoreErrors.invalidArgument(`${where}.files[${i}].content must be a string.`);
    if (file.name !== undefined && typeof file.name !== 'string') throw firestoreErrors.invalidArgument(`${where}.files[${i}].name must be a string.`);
    total += Buffer.byteLength(file.content);
    if (total > maxSourceBytes) throw firestoreErrors.invalidArgument(`Rules source exceeds the ${maxSourceBytes / 1024} KiB limit.`);
    return { name: typeof file.name === 'string' && file.name ? file.name : 'firestore.rules', content: file.content };
  });
}

function wireIssue(fileName: string, issue: { line: number; column: number; message: string; severity: string }) {
  return { sourcePosition: { fileName, line: issue.line, column: issue.column }, description: issue.message, severity: issue.severity };
}

/** A release body's name (`projects/p/releases/<name>`) and ruleset (`projects/p/rulesets/<id>`). */
function releaseTarget(project: string, wire: Record<string, unknown>): { name: string; rulesetId: string } {
  onlyKeys(wire, ['name', 'rulesetName', 'createTime', 'updateTime'], 'release');
  const releasePrefix = `projects/${project}/releases/`;
  const rulesetPrefix = `projects/${project}/rulesets/`;
  if (typeof wire.name !== 'string' || !wire.name.startsWith(releasePrefix) || wire.name.length === releasePrefix.length) {
    throw firestoreErrors.invalidArgument(`release.name must be ${releasePrefix}<release>.`);
  }
  if (typeof wire.rulesetName !== 'string' || !wire.rulesetName.startsWith(rulesetPrefix) || wire.rulesetName.length === rulesetPrefix.length) {
    throw firestoreErrors.invalidArgument(`release.rulesetName must be ${rulesetPrefix}<ruleset>.`);
  }
  return { name: wire.name.slice(releasePrefix.length), rulesetId: wire.rulesetName.slice(rulesetPrefix.length) };
}

async function releaseOrFail(registry: RulesRegistry, project: string, name: string, rulesetId: string): Promise<ReleaseRecord> {
  const release = await registry.release(project, name, rulesetId);
  if (!release) throw firestoreErrors.notFound(`Ruleset projects/${project}/rulesets/${rulesetId} not found.`);
  return release;
}

function releaseParams(request: FastifyRequest): { project: string; name: string } {
  const params = request.params as { project: string; '*': string };
  if (!params['*']) throw firestoreErrors.invalidArgument('A release name is required.');
  // Fastify has decoded the path once already: decoding again would misread (or throw on) a `%`.
  return { project: params.project, name: params['*'] };
}

function rulesetToWire(ruleset: RulesetRecord, withSource: boolean) {
  return {
    name: `projects/${ruleset.projectId}/rulesets/${ruleset.rulesetId}`,
    ...(withSource ? { source: { files: ruleset.files } } : {}),
    createTime: new Date(ruleset.createTime).toISOString(),
  };
}

function releaseToWire(release: ReleaseRecord) {
  return {
    name: `projects/${release.projectId}/releases/${release.name}`,
    rulesetName: `projects/${release.projectId}/rulesets/${release.rulesetId}`,
    createTime: new Date(release.createTime).toISOString(),
    updateTime: new Date(release.updateTime).toISOString(),
  };
}
