/**
 * The mixed-load soak: one Hearth process under a steady mix of identity and database traffic
 * (sign-ups, sign-ins, refreshes, deletes, document writes over a fixed set of ids, queries, reset
 * mails) while its resident memory is
 * sampled from /proc. The data set is kept bounded (overwrites and deletes), so memory that keeps
 * growing is a leak, not data.
 */
import { readFileSync, rmSync } from 'node:fs';
import { randomInt } from 'node:crypto';
import { freePort, postJson, tempDataDir } from './hearth.js';
import { spawnForSoak as spawnHearth, unlimitedSignUps } from './soak-process.js';
import { ChoosySmtp } from './soak-smtp.js';

export interface MixedOptions {
  minutes: number;
  workers: number;
  sampleEveryMs: number;
  log: (line: string) => void;
}

export interface RssSample {
  atMs: number;
  rssMb: number;
  requests: number;
}

export interface MixedReport {
  minutes: number;
  requests: number;
  errors: number;
  serverErrors: number;
  samples: RssSample[];
  /** Mean RSS over the second quarter of the run (after warm-up) and over the last quarter. */
  earlyMb: number;
  lateMb: number;
  maxMb: number;
  /**
   * The lowest sample of each quarter: RSS saws up and down with garbage collection, and its floor
   * is what a leak raises.
   */
  quarterFloorsMb: number[];
  /** Least-squares slope over the samples after the first quarter, MB per hour. */
  slopeMbPerHour: number;
}

const projectId = 'demo-hearth';
const owner = { authorization: 'Bearer owner' };
const documentIds = 2000;

export async function runMixedLoad(options: MixedOptions): Promise<MixedReport> {
  const smtp = new ChoosySmtp();
  await smtp.start();
  const port = await freePort();
  const dataDir = tempDataDir();
  // The soak signs up from 127.0.0.1 without pause: past the per-address sign-up limit on purpose.
  const server = await spawnHearth(['--port', String(port), '--data', dataDir, '--dev', '--log-level', 'error', '--smtp-url', smtp.url, ...unlimitedSignUps]);
  const pid = server.child.pid!;
  const started = Date.now();
  const deadline = started + options.minutes * 60_000;
  const counts = { requests: 0, errors: 0, serverErrors: 0 };
  const samples: RssSample[] = [];
  const sampler = setInterval(() => {
    samples.push({ atMs: Date.now() - started, rssMb: rssMb(pid), requests: counts.requests });
    const last = samples.at(-1)!;
    options.log(`t=${Math.round(last.atMs / 1000)} s  rss ${last.rssMb.toFixed(1)} MB  requests ${last.requests}  errors ${counts.errors} (5xx ${counts.serverErrors})`);
  }, options.sampleEveryMs);
  try {
    const call = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
      const response = await postJson(`${server.url}${path}`, body, headers);
      counts.requests++;
      if (response.status >= 500) counts.serverErrors++;
      if (response.status >= 400) counts.errors++;
      return response;
    };
    const worker = async (id: number) => {
      for (let i = 0; Date.now() < deadline; i++) await step(call, id, i);
    };
    await Promise.all(Array.from({ length: options.workers }, (_, id) => worker(id)));
  } finally {
    clearInterval(sampler);
    await server.stop();
    await smtp.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
  return summarize(options.minutes, counts, samples);
}

type Call = (path: string, body: unknown, headers?: Record<string, string>) => Promise<{ status: number; body: any }>;

/** One round of the mix: an account's life, a few document writes and reads, a query, a mail. */
async function step(call: Call, worker: number, i: number): Promise<void> {
  const v1 = '/identitytoolkit.googleapis.com/v1';
  const email = `mixed-${worker}-${i}@soak.example`;
  const signUp = await call(`${v1}/accounts:signUp?key=any`, { email, password: 'secret12', returnSecureToken: true });
  if (signUp.status === 200) {
    await call(`${v1}/accounts:signInWithPassword?key=any`, { email, password: 'secret12', returnSecureToken: true });
    // Rarely, so the per-address ceiling on failed sign-ins (100 in 15 minutes) is not what is measured.
    if (i % 20 === 0) await call(`${v1}/accounts:signInWithPassword?key=any`, { email, password: 'wrong-one', returnSecureToken: true });
    await call(`/securetoken.googleapis.com/v1/token?key=any`, { grant_type: 'refresh_token', refresh_token: signUp.body.refreshToken });
    await call(`${v1}/accounts:lookup?key=any`, { idToken: signUp.body.idToken });
    if (i % 5 === 0) await call(`${v1}/accounts:sendOobCode?key=any`, { requestType: 'PASSWORD_RESET', email });
    await call(`${v1}/accounts:delete?key=any`, { idToken: signUp.body.idToken });
  }
  const documents = `/v1/projects/${projectId}/databases/(default)/documents`;
  const writes = Array.from({ length: 5 }, () => ({
    update: {
      name: `projects/${projectId}/databases/(default)/documents/mixed/d${randomInt(documentIds)}`,
      fields: { n: { integerValue: String(randomInt(1000)) }, tag: { stringValue: `t${randomInt(20)}` }, list: { arrayValue: { values: [{ integerValue: String(i) }] } } },
    },
  }));
  await call(`${documents}:commit`, { writes }, owner);
  await call(
    `${documents}:runQuery`,
    { structuredQuery: { from: [{ collectionId: 'mixed' }], where: { fieldFilter: { field: { fieldPath: 'tag' }, op: 'EQUAL', value: { stringValue: `t${randomInt(20)}` } } }, orderBy: [{ field: { fieldPath: 'n' } }], limit: 20 } },
    owner,
  );
  await call(`${documents}:runAggregationQuery`, { structuredAggregationQuery: { structuredQuery: { from: [{ collectionId: 'mixed' }] }, aggregations: [{ alias: 'c', count: {} }] } }, owner);
  if (i % 10 === 0) await call(`${documents}:commit`, { writes: [{ delete: `projects/${projectId}/databases/(default)/documents/mixed/d${randomInt(documentIds)}` }] }, owner);
}

function rssMb(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
    return kb / 1024;
  } catch {
    return 0;
  }
}

export function summarize(minutes: number, counts: { requests: number; errors: number; serverErrors: number }, samples: RssSample[]): MixedReport {
  const quarter = Math.max(1, Math.floor(samples.length / 4));
  const mean = (xs: RssSample[]) => (xs.length ? xs.reduce((sum, s) => sum + s.rssMb, 0) / xs.length : 0);
  const steady = samples.slice(quarter);
  const n = steady.length;
  let slope = 0;
  if (n >= 2) {
    const mx = steady.reduce((s, p) => s + p.atMs, 0) / n;
    const my = mean(steady);
    const num = steady.reduce((s, p) => s + (p.atMs - mx) * (p.rssMb - my), 0);
    const den = steady.reduce((s, p) => s + (p.atMs - mx) ** 2, 0);
    slope = den ? (num / den) * 3600_000 : 0;
  }
  return {
    minutes,
    ...counts,
    samples,
    earlyMb: mean(samples.slice(quarter, 2 * quarter)),
    lateMb: mean(samples.slice(-quarter)),
    maxMb: Math.max(0, ...samples.map((s) => s.rssMb)),
    quarterFloorsMb: [0, 1, 2, 3].map((q) => Math.min(...samples.slice(q * quarter, q === 3 ? samples.length : (q + 1) * quarter).map((s) => s.rssMb))),
    slopeMbPerHour: slope,
  };
}
