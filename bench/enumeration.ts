/**
 * Email enumeration by timing: sendOobCode (PASSWORD_RESET) answer times for addresses with and
 * without an account, with enumeration protection on (the default), measured from this process
 * against a Hearth in its own process, as a remote client would see them. Known and unknown
 * requests alternate; the ratio of medians should be 1.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort } from '../tests/helpers/hearth.js';

export interface TimingResult {
  known: { median: number; p90: number };
  unknown: { median: number; p90: number };
  pairs: number;
}

const quantile = (values: number[], p: number): number => values.slice().sort((a, b) => a - b)[Math.floor(p * (values.length - 1))] ?? NaN;

/** 45 pairs: 90 mails stay under the default 100-per-client-address hourly limit, so none is throttled. */
export async function measureEnumerationTiming(pairs = 45): Promise<TimingResult> {
  const dataDir = mkdtempSync(join(tmpdir(), 'hearth-bench-timing-'));
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', resolve(import.meta.dirname, '../packages/server/src/main.ts'), 'start', '--port', String(port), '--data', dataDir, '--dev', '--log-level', 'warn'], {
    stdio: 'ignore',
  });
  const base = `http://127.0.0.1:${port}/identitytoolkit.googleapis.com/v1`;
  const post = (path: string, body: unknown) => fetch(`${base}/${path}?key=bench`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  try {
    for (let tries = 0; ; tries++) {
      try {
        if ((await fetch(`http://127.0.0.1:${port}/healthz`)).ok) break;
      } catch {
        if (tries > 300) throw new Error('Hearth did not start');
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    // `hearth start --dev` starts with enumeration protection off, as the Auth emulator: on, as in production.
    await fetch(`http://127.0.0.1:${port}/emulator/v1/projects/demo-hearth/config`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ emailPrivacyConfig: { enableImprovedEmailPrivacy: true } }) });
    for (let i = 0; i < pairs; i++) await (await post('accounts:signUp', { email: `known${i}@bench.example`, password: 'bench-password' })).text();
    const times = { known: [] as number[], unknown: [] as number[] };
    for (let i = 0; i < pairs; i++) {
      for (const kind of ['known', 'unknown'] as const) {
        const started = performance.now();
        const response = await post('accounts:sendOobCode', { requestType: 'PASSWORD_RESET', email: `${kind}${i}@bench.example` });
        const text = await response.text();
        if (response.status !== 200) throw new Error(`sendOobCode for a ${kind} address answered ${response.status}: ${text}`);
        times[kind].push(performance.now() - started);
        await new Promise((r) => setTimeout(r, 5));
      }
    }
    const summary = (xs: number[]) => ({ median: quantile(xs, 0.5), p90: quantile(xs, 0.9) });
    return { known: summary(times.known), unknown: summary(times.unknown), pairs };
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    rmSync(dataDir, { recursive: true, force: true });
  }
}
