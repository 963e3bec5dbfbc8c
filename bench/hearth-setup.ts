import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultOptions } from '../packages/server/src/config.js';
import { createHearth, type Hearth } from '../packages/server/src/server.js';
import { trivialHandler } from './baselines.js';

export interface BenchUser {
  email: string;
  password: string;
  localId: string;
  idToken: string;
  refreshToken: string;
}

export interface BenchHearth {
  hearth: Hearth;
  url: string;
  apiKey: string;
  close(): Promise<void>;
}

/**
 * The bare trivial route's handler (baselines.ts), on Hearth's own app and under an identity
 * API path, so it passes every hook an accounts call passes (CORS, origin checks, metrics, logging):
 * what is left between it and a real call is that call's own work.
 */
export const hearthTrivialPath = '/identitytoolkit.googleapis.com/v1/bench:trivial';

/**
 * Hearth in this process, on a free port, with a temporary data folder and throttles out of the way
 * (SMS limits keep their hour-long windows, so each text costs the same counter writes as in use),
 * and `hearthTrivialPath` added before it listens.
 */
/** `indexesFile` is written into the bench's data folder (as firestore.indexes.json) when given. */
export async function startBenchHearth(setup: { indexes?: unknown } = {}): Promise<BenchHearth> {
  const dataDir = mkdtempSync(join(tmpdir(), 'hearth-bench-'));
  const indexesFile = join(dataDir, 'firestore.indexes.json');
  if (setup.indexes !== undefined) writeFileSync(indexesFile, JSON.stringify(setup.indexes));
  try {
    const options = defaultOptions({
      port: 0,
      dataDir,
      dev: true,
      logLevel: 'silent',
      webRoot: undefined,
      accountThrottle: { maxFailures: 1e9, windowMs: 1 },
      addressThrottle: { maxFailures: 1e9, windowMs: 1 },
      signUpLimits: { perAddress: { maxFailures: 1e9, windowMs: 1 }, perProject: { maxFailures: 1e9, windowMs: 1 } },
      smsLimits: { perNumber: { maxFailures: 1e6, windowMs: 3600_000 }, perAddress: { maxFailures: 1e6, windowMs: 3600_000 } },
      ...(setup.indexes !== undefined ? { indexesFile } : {}),
    });
    const hearth = await createHearth(options);
    hearth.app.post(hearthTrivialPath, trivialHandler);
    const url = await hearth.listen();
    return {
      hearth,
      url,
      apiKey: hearth.defaultApiKey,
      async close() {
        try {
          await hearth.close();
        } finally {
          rmSync(dataDir, { recursive: true, force: true });
        }
      },
    };
  } catch (error) {
    rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
}

type Json = Record<string, unknown>;

/** POSTs and insists on a 2xx JSON answer. */
export async function post(url: string, body: string, contentType: string): Promise<Json> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': contentType }, body });
  const text = await response.text();
  if (!response.ok) throw new Error(`POST ${url.split('?')[0]} answered ${response.status}: ${text}`);
  return JSON.parse(text) as Json;
}

/**
 * The default database's documents root, and `call(verb, body)`: a POST of `:verb` on it as the
 * owner that insists on a 200 and returns the parsed answer (commit, runQuery, ...).
 */
export function documentsApi(target: BenchHearth): { root: string; call: (verb: string, body: unknown) => Promise<unknown> } {
  const root = `projects/${target.hearth.options.defaultProjectId}/databases/(default)/documents`;
  const headers = { authorization: 'Bearer owner', 'content-type': 'application/json' };
  const call = async (verb: string, body: unknown) => {
    const response = await fetch(`${target.url}/v1/${root}:${verb}`, { method: 'POST', headers, body: JSON.stringify(body) });
    const answer = await response.text();
    if (response.status !== 200) throw new Error(`${verb}: ${response.status} ${answer.slice(0, 300)}`);
    return JSON.parse(answer) as unknown;
  };
  return { root, call };
}

function text(json: Json, field: string): string {
  const value = json[field];
  if (typeof value !== 'string' || value === '') throw new Error(`response lacks "${field}": ${JSON.stringify(json)}`);
  return value;
}

/** Signs `count` users up, `concurrency` at a time. */
export async function createUsers(target: BenchHearth, count: number, concurrency: number): Promise<BenchUser[]> {
  const users: BenchUser[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < count; i = next++) {
      const email = `bench-${i}@example.com`;
      const password = `bench-password-${i}`;
      const json = await post(`${target.url}/identitytoolkit.googleapis.com/v1/accounts:signUp?key=${target.apiKey}`, JSON.stringify({ email, password, returnSecureToken: true }), 'application/json');
      users[i] = { email, password, localId: text(json, 'localId'), idToken: text(json, 'idToken'), refreshToken: text(json, 'refreshToken') };
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return users;
}

export const paths = {
  signIn: (apiKey: string) => `/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword?key=${apiKey}`,
  refresh: (apiKey: string) => `/securetoken.googleapis.com/v1/token?key=${apiKey}`,
  lookup: (apiKey: string) => `/identitytoolkit.googleapis.com/v1/accounts:lookup?key=${apiKey}`,
  sendVerificationCode: (apiKey: string) => `/identitytoolkit.googleapis.com/v1/accounts:sendVerificationCode?key=${apiKey}`,
};

export const bodies = {
  signIn: (user: BenchUser) => JSON.stringify({ email: user.email, password: user.password, returnSecureToken: true }),
  refresh: (user: BenchUser) => new URLSearchParams({ grant_type: 'refresh_token', refresh_token: user.refreshToken }).toString(),
  lookup: (user: BenchUser) => JSON.stringify({ idToken: user.idToken }),
  /** One fictional number per user (+1 555-01xx style), with the token any --dev verifier gives. */
  sendVerificationCode: (_user: BenchUser, index: number) => JSON.stringify({ phoneNumber: `+1555${String(index).padStart(7, '0')}`, recaptchaToken: 'bench' }),
};

/** One request of each kind, checked by content, so the load runs hit working endpoints. */
export async function smokeTest(target: BenchHearth, user: BenchUser): Promise<void> {
  const signIn = await post(target.url + paths.signIn(target.apiKey), bodies.signIn(user), 'application/json');
  if (text(signIn, 'localId') !== user.localId) throw new Error('signInWithPassword answered another user');
  text(signIn, 'idToken');
  const refresh = await post(target.url + paths.refresh(target.apiKey), bodies.refresh(user), 'application/x-www-form-urlencoded');
  if (text(refresh, 'user_id') !== user.localId) throw new Error('token refresh answered another user');
  text(refresh, 'id_token');
  const lookup = await post(target.url + paths.lookup(target.apiKey), bodies.lookup(user), 'application/json');
  const found = lookup.users;
  if (!Array.isArray(found) || found.length !== 1 || (found[0] as Json).localId !== user.localId) throw new Error(`lookup answered ${JSON.stringify(lookup)}`);
}
