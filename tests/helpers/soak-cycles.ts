/**
 * The kill -9 soak: Hearth runs as its own process under concurrent writers (document batches,
 * sign-ups, reset mails), is killed with SIGKILL at a random moment, and restarted on the same data;
 * a verifier then checks that every acknowledged batch, account and mail survived and that no batch
 * is half applied (acknowledged or not: all of its documents or none).
 */
import { randomInt } from 'node:crypto';
import { rmSync } from 'node:fs';
import { freePort, postJson, tempDataDir, type SpawnedHearth } from './hearth.js';
import { spawnForSoak as spawnHearth, unlimitedSignUps } from './soak-process.js';
import { ChoosySmtp } from './soak-smtp.js';

export interface CycleOptions {
  cycles: number;
  /** Concurrent writers of each kind. */
  writersPerKind: number;
  /** How long writers run before the kill, at most (each cycle picks a random moment). */
  maxRunMs: number;
  log: (line: string) => void;
  dataDir?: string;
}

export interface CycleReport {
  cycles: number;
  acknowledged: { batches: number; accounts: number; mails: number };
  attemptedBatches: number;
  lost: string[];
  halfApplied: string[];
  restartMs: { median: number; p95: number; max: number };
  mailsDelivered: number;
}

const projectId = 'demo-hearth';
const batchSize = 3;
const documentsUrl = (url: string) => `${url}/v1/projects/${projectId}/databases/(default)/documents`;
const owner = { authorization: 'Bearer owner' };

interface Acknowledged {
  batches: string[];
  attempted: string[];
  accounts: string[];
  /** One entry per acknowledged mail (a recipient may get several). */
  mails: string[];
}

export async function runKillCycles(options: CycleOptions): Promise<CycleReport> {
  const dataDir = options.dataDir ?? tempDataDir();
  const port = await freePort();
  const smtp = new ChoosySmtp();
  await smtp.start();
  // The soak signs up from 127.0.0.1 without pause: past the per-address sign-up limit on purpose.
  const args = ['--port', String(port), '--data', dataDir, '--dev', '--log-level', 'error', '--smtp-url', smtp.url, ...unlimitedSignUps];
  const acked: Acknowledged = { batches: [], attempted: [], accounts: [], mails: [] };
  const restartMs: number[] = [];
  const lost: string[] = [];
  const halfApplied: string[] = [];
  let server = await spawnHearth(args);
  let checked = { attempted: 0, accounts: 0 };
  try {
    for (let cycle = 0; cycle < options.cycles; cycle++) {
      const stop = { now: false };
      const writers: Array<Promise<void>> = [];
      for (let w = 0; w < options.writersPerKind; w++) {
        writers.push(batchWriter(server.url, `c${cycle}w${w}`, acked, stop));
        writers.push(accountWriter(server.url, `c${cycle}w${w}`, acked, stop));
        writers.push(mailWriter(server.url, acked, stop));
      }
      // Every kind gets something acknowledged in every cycle (on a busy machine a sign-up's scrypt
      // can take seconds), then the kill comes at a random moment.
      const before = { batches: acked.batches.length, accounts: acked.accounts.length, mails: acked.mails.length };
      for (const deadline = Date.now() + 30_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 20))) {
        const mailsDue = before.accounts > 0 ? acked.mails.length > before.mails : true;
        if (acked.batches.length > before.batches && acked.accounts.length > before.accounts && mailsDue) break;
      }
      await new Promise((r) => setTimeout(r, randomInt(Math.max(1, options.maxRunMs))));
      server.child.kill('SIGKILL');
      stop.now = true;
      await Promise.all(writers);
      await server.stop();
      const started = Date.now();
      server = await spawnHearth(args);
      restartMs.push(Date.now() - started);
      // Each cycle checks what is new since the last check; the end checks everything again.
      const problems = await verify(server.url, acked, checked);
      checked = { attempted: acked.attempted.length, accounts: acked.accounts.length };
      lost.push(...problems.lost);
      halfApplied.push(...problems.halfApplied);
      options.log(
        `cycle ${cycle + 1}/${options.cycles}: restart ${restartMs.at(-1)} ms; acknowledged so far ${acked.batches.length} batches, ${acked.accounts.length} accounts, ${acked.mails.length} mails; lost ${lost.length}, half-applied ${halfApplied.length}`,
      );
      if (lost.length || halfApplied.length) break;
    }
    const final = await verify(server.url, acked, { attempted: 0, accounts: 0 });
    lost.push(...final.lost.filter((item) => !lost.includes(item)));
    halfApplied.push(...final.halfApplied.filter((item) => !halfApplied.includes(item)));
    // At least once: every acknowledged mail reaches the SMTP server (after retries and restarts).
    const wanted = countBy(acked.mails);
    await smtp
      // The backlog of the last cycles drains after them: a minute, plus time in proportion to it.
      .until(() => [...wanted].every(([to, n]) => smtp.to(to).length >= n), 'every acknowledged mail delivered', Math.min(600_000, 60_000 + 50 * acked.mails.length))
      .catch(() => {
        for (const [to, n] of wanted) if (smtp.to(to).length < n) lost.push(`mail to ${to}: ${smtp.to(to).length} of ${n} delivered`);
      });
  } finally {
    await server.stop();
    await smtp.stop();
  }
  // A failed run keeps its data folder for a look; a passing one leaves nothing behind.
  if (lost.length || halfApplied.length) options.log(`data kept in ${dataDir}`);
  else if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
  const sorted = [...restartMs].sort((a, b) => a - b);
  return {
    cycles: restartMs.length,
    acknowledged: { batches: acked.batches.length, accounts: acked.accounts.length, mails: acked.mails.length },
    attemptedBatches: acked.attempted.length,
    lost,
    halfApplied,
    restartMs: { median: sorted[Math.floor(sorted.length / 2)] ?? 0, p95: sorted[Math.floor(sorted.length * 0.95)] ?? 0, max: sorted.at(-1) ?? 0 },
    mailsDelivered: smtp.accepted.length,
  };
}

async function batchWriter(url: string, prefix: string, acked: Acknowledged, stop: { now: boolean }): Promise<void> {
  for (let i = 0; !stop.now; i++) {
    const batch = `${prefix}b${i}`;
    acked.attempted.push(batch);
    const writes = Array.from({ length: batchSize }, (_, k) => ({
      update: { name: `projects/${projectId}/databases/(default)/documents/soak/${batch}-${k}`, fields: { batch: { stringValue: batch }, k: { integerValue: String(k) } } },
    }));
    try {
      const response = await postJson(`${documentsUrl(url)}:commit`, { writes }, owner);
      if (response.status === 200) acked.batches.push(batch);
    } catch {
      return; // the server died mid-request: not acknowledged
    }
  }
}

async function accountWriter(url: string, prefix: string, acked: Acknowledged, stop: { now: boolean }): Promise<void> {
  for (let i = 0; !stop.now; i++) {
    const email = `${prefix}a${i}@soak.example`;
    try {
      const response = await postJson(`${url}/identitytoolkit.googleapis.com/v1/accounts:signUp?key=any`, { email, password: 'secret12' });
      if (response.status === 200) acked.accounts.push(email);
    } catch {
      return;
    }
  }
}

async function mailWriter(url: string, acked: Acknowledged, stop: { now: boolean }): Promise<void> {
  while (!stop.now) {
    if (acked.accounts.length === 0) {
      await new Promise((r) => setTimeout(r, 20));
      continue;
    }
    // Mails per recipient and per client address are limited per hour: spread them over accounts.
    const email = acked.accounts[randomInt(acked.accounts.length)]!;
    try {
      const response = await postJson(`${url}/identitytoolkit.googleapis.com/v1/accounts:sendOobCode?key=any`, { requestType: 'PASSWORD_RESET', email });
      if (response.status === 200) acked.mails.push(email);
      else await new Promise((r) => setTimeout(r, 50)); // a limit: not acknowledged, not expected
    } catch {
      return;
    }
  }
}

/** Checks every acknowledged write (and every attempted batch for atomicity) against the restarted server. */
async function verify(url: string, acked: Acknowledged, from: { attempted: number; accounts: number }): Promise<{ lost: string[]; halfApplied: string[] }> {
  const lost: string[] = [];
  const halfApplied: string[] = [];
  const ackedBatches = new Set(acked.batches);
  for (const chunk of chunks(acked.attempted.slice(from.attempted), 100)) {
    const names = chunk.flatMap((batch) => Array.from({ length: batchSize }, (_, k) => `projects/${projectId}/databases/(default)/documents/soak/${batch}-${k}`));
    const response = await postJson(`${documentsUrl(url)}:batchGet`, { documents: names }, owner);
    if (response.status !== 200) throw new Error(`batchGet: ${response.status} ${JSON.stringify(response.body)}`);
    const found = new Set((response.body as Array<{ found?: { name: string } }>).filter((r) => r.found).map((r) => r.found!.name));
    for (const batch of chunk) {
      const present = names.filter((n) => n.includes(`/soak/${batch}-`) && found.has(n)).length;
      if (present !== 0 && present !== batchSize) halfApplied.push(`batch ${batch}: ${present} of ${batchSize} documents`);
      if (ackedBatches.has(batch) && present !== batchSize) lost.push(`batch ${batch}`);
    }
  }
  for (const chunk of chunks(acked.accounts.slice(from.accounts), 100)) {
    const response = await postJson(`${url}/identitytoolkit.googleapis.com/v1/projects/${projectId}/accounts:lookup`, { email: chunk }, owner);
    if (response.status !== 200) throw new Error(`lookup: ${response.status} ${JSON.stringify(response.body)}`);
    const found = new Set(((response.body as { users?: Array<{ email: string }> }).users ?? []).map((u) => u.email));
    for (const email of chunk) if (!found.has(email)) lost.push(`account ${email}`);
  }
  return { lost, halfApplied };
}

function chunks<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

function countBy(items: string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(item, (counts.get(item) ?? 0) + 1);
  return counts;
}

export type { SpawnedHearth };
