/**
 * The two servers of the security-rules differential test: Google's Firestore emulator (the oracle) and Hearth
 * (in-process, --dev), or a second emulator with RULES_DIFF_SUBJECT=emulator to check the harness itself. Each
 * ruleset gets a project of its own on both, so rulesets load once and run side by side.
 */
import { after, before } from 'node:test';
import { startGoogleEmulator, type GoogleEmulator } from './firestore-emulator.js';
import { startHearth, type TestHearth } from './hearth.js';
import { send, toWireFields, wireWrite, type PlainFields, type RulesTarget, type Step } from './rules-requests.js';

export interface Server {
  label: string;
  url: string;
}

export interface RulesServers {
  oracle: Server;
  subject: Server;
}

const compareWithSecondEmulator = process.env.RULES_DIFF_SUBJECT === 'emulator';

/**
 * Starts the oracle and the subject before the tests of the suite it is called in and stops them after; the
 * returned object is filled in by then. `skip` is set when the emulator is not installed.
 */
export function useRulesServers(): RulesServers {
  const servers: RulesServers = { oracle: { label: 'emulator', url: '' }, subject: { label: '', url: '' } };
  let oracle: GoogleEmulator | undefined;
  let secondEmulator: GoogleEmulator | undefined;
  let hearth: TestHearth | undefined;
  before(async () => {
    [oracle, secondEmulator, hearth] = await Promise.all([
      startGoogleEmulator(),
      compareWithSecondEmulator ? startGoogleEmulator() : undefined,
      compareWithSecondEmulator ? undefined : startHearth(),
    ]);
    if (!oracle) throw new Error('the Firestore emulator did not start');
    servers.oracle.url = oracle.url;
    servers.subject = secondEmulator ? { label: 'second emulator', url: secondEmulator.url } : { label: 'Hearth', url: hearth!.url };
  });
  after(async () => {
    await Promise.all([hearth?.close(), secondEmulator?.stop(), oracle?.stop()]);
  });
  return servers;
}

export const on = (server: Server, projectId: string): RulesTarget => ({ label: server.label, url: server.url, projectId });

/** PUT /emulator/v1/projects/{p}:securityRules, as firebase-tools and @firebase/rules-unit-testing send it. */
export function loadRules(target: RulesTarget, content: string): Promise<Step> {
  return send(target, 'PUT', `/emulator/v1/projects/${target.projectId}:securityRules`, { rules: { files: [{ name: 'firestore.rules', content }] } }, undefined);
}

const admin = 'Bearer owner';

/** Writes the documents as the administrator (rules do not apply), each exactly as given. */
export async function writeAsAdmin(target: RulesTarget, documents: Record<string, PlainFields>): Promise<void> {
  const writes = Object.entries(documents).map(([path, fields]) => wireWrite(target, { op: 'set', path, fields }));
  if (writes.length === 0) return;
  const step = await send(target, 'POST', `/v1/projects/${target.projectId}/databases/(default)/documents:commit`, { writes }, admin);
  if (step.status !== 200) throw new Error(`${target.label}: seeding ${target.projectId} failed: ${step.status} ${JSON.stringify(step.body).slice(0, 400)}`);
}

/** Puts `paths` back as the seed has them: its documents rewritten whole, the others deleted. */
export async function restoreAsAdmin(target: RulesTarget, seed: Record<string, PlainFields>, paths: string[]): Promise<void> {
  const name = (path: string) => `projects/${target.projectId}/databases/(default)/documents/${path}`;
  const writes = [...new Set(paths)].map((path) => (seed[path] ? { update: { name: name(path), fields: toWireFields(seed[path], target.projectId) } } : { delete: name(path) }));
  if (writes.length === 0) return;
  const step = await send(target, 'POST', `/v1/projects/${target.projectId}/databases/(default)/documents:commit`, { writes }, admin);
  if (step.status !== 200) throw new Error(`${target.label}: restoring ${paths.join(', ')} in ${target.projectId} failed: ${step.status} ${JSON.stringify(step.body).slice(0, 400)}`);
}
