/**
 * `npm run bench -- passkeys` (and a row of `-- auth`): passkey sign-ins a second (v2
 * passkeySignIn:start, the authenticator's signature, passkeySignIn:finalize) beside a raw ES256
 * signature verification in the same process, with the ratio. The authenticator is a software one
 * (tests/helpers/soft-passkey.ts: P-256, attestation "none", user verification claimed), so the bench needs no browser.
 * Each sign-in comes from its own X-Forwarded-For address (the server trusts loopback as a proxy):
 * the start calls' per-address limit would otherwise stop the run, and it is not what is measured.
 * Settings: BENCH_PASSKEY_USERS (50), BENCH_PASSKEY_SECONDS (5), BENCH_PASSKEY_CONCURRENCY (8).
 */
import { generateKeyPairSync, randomBytes, sign, verify } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultOptions } from '../packages/server/src/config.js';
import { createHearth } from '../packages/server/src/server.js';
import { SoftPasskey } from '../tests/helpers/soft-passkey.js';
import { envCount, machineLine, progress } from './env.js';

const userCount = envCount('BENCH_PASSKEY_USERS', 50);
const seconds = envCount('BENCH_PASSKEY_SECONDS', 5);
const concurrency = envCount('BENCH_PASSKEY_CONCURRENCY', 8);

let address = 0;
async function post(url: string, body: unknown): Promise<any> {
  address++;
  const forwarded = `10.${(address >> 16) & 255}.${(address >> 8) & 255}.${address & 255}`;
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-forwarded-for': forwarded }, body: JSON.stringify(body) });
  const answer = await response.json();
  if (!response.ok) throw new Error(`${url.split('?')[0]} answered ${response.status}: ${JSON.stringify(answer).slice(0, 300)}`);
  return answer;
}

/** Operations a second of `operation` over `ms`, `width` at a time. */
async function rate(ms: number, width: number, operation: () => Promise<void> | void): Promise<number> {
  let done = 0;
  const until = performance.now() + ms;
  const started = performance.now();
  await Promise.all(Array.from({ length: width }, async () => { while (performance.now() < until) { await operation(); done++; } }));
  return done / ((performance.now() - started) / 1000);
}

export async function runPasskeyBench(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'hearth-bench-passkeys-'));
  const hearth = await createHearth(defaultOptions({ port: 0, dataDir, dev: true, logLevel: 'silent', trustProxy: ['loopback'], defaultProjectId: 'bench-passkeys' }));
  const url = await hearth.listen();
  try {
    const apiKey = hearth.defaultApiKey;
    const origin = url.replace('127.0.0.1', 'localhost');
    const v1 = (path: string) => `${url}/identitytoolkit.googleapis.com/v1/accounts:${path}?key=${apiKey}`;
    const v2 = (path: string) => `${url}/identitytoolkit.googleapis.com/v2/accounts/${path}?key=${apiKey}`;
    progress(`enrolling ${userCount} passkeys`);
    const keys: SoftPasskey[] = [];
    for (let i = 0; i < userCount; i++) {
      const user = await post(v1('signUp'), { email: `passkey-${i}@example.com`, password: 'bench-pass-1', returnSecureToken: true });
      const passkey = new SoftPasskey(user.localId);
      const start = await post(v2('passkeyEnrollment:start'), { idToken: user.idToken });
      await post(v2('passkeyEnrollment:finalize'), { idToken: user.idToken, authenticatorRegistrationResponse: passkey.register(start.credentialCreationOptions.challenge, origin) });
      keys.push(passkey);
    }
    let next = 0;
    const signIn = async () => {
      // Sign-ins go round the passkeys; with more passkeys than requests in flight, no two share one (its counter).
      const passkey = keys[next++ % keys.length]!;
      const start = await post(v2('passkeySignIn:start'), {});
      await post(v2('passkeySignIn:finalize'), { authenticatorAuthenticationResponse: passkey.assert(start.credentialRequestOptions.challenge, origin) });
    };
    await rate(1000, concurrency, signIn); // warm-up
    // The baseline: one ES256 verification, what a sign-in cannot do without, on this process's thread.
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const data = randomBytes(69);
    const signature = sign('sha256', data, privateKey);
    const verifications = await rate(seconds * 1000, 1, () => {
      if (!verify('sha256', data, publicKey, signature)) throw new Error('the baseline signature does not verify');
    });
    const signIns = await rate(seconds * 1000, concurrency, signIn);
    console.log(`\nPasskey sign-in (start + finalize, ${concurrency} in flight, ${userCount} passkeys, ${seconds} s); ${machineLine()}`);
    console.log(`passkey sign-ins            ${signIns.toFixed(0).padStart(8)} /s`);
    console.log(`raw ES256 verifications     ${verifications.toFixed(0).padStart(8)} /s  (same process, one thread)`);
    console.log(`ratio                       x${(signIns / verifications).toFixed(3)} (a sign-in costs ${(verifications / signIns).toFixed(1)} verifications)`);
  } finally {
    await hearth.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
