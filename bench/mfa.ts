import { join } from 'node:path';
import { Secret, TOTP } from 'otpauth';
import { PendingCredentials } from '../packages/server/src/auth/mfa/pending-credentials.js';
import { SealingKeys } from '../packages/server/src/auth/mfa/sealing.js';
import { post, type BenchHearth } from './hearth-setup.js';

export const totpSignInPath = (apiKey: string) => `/identitytoolkit.googleapis.com/v2/accounts/mfaSignIn:finalize?key=${apiKey}`;
const period = 30;
/** How far from the current step codes are made: inside the default window of five, with room for a step to pass mid-run. */
const reach = 4;

interface Factor {
  localId: string;
  createdAt: number;
  enrollmentId: string;
  secret: Secret;
  lastStep: number;
}

/**
 * Bodies for mfaSignIn:finalize with a TOTP code, made as each request leaves: every request needs
 * its own pending credential (each works once) and a code for a later time step than the factor's
 * last (replays are refused), so a fixed list cannot serve a load run. Requests go round many
 * factors, so two in flight never share one. The pending credentials are sealed here with the
 * server's own key file, as a password sign-in would have sealed them: the step measured is the
 * second factor alone, not the scrypt of the first.
 */
export class TotpSignInLoad {
  private next = 0;

  private constructor(
    private readonly factors: Factor[],
    private readonly pending: PendingCredentials,
    private readonly projectId: string,
  ) {}

  /** `users` accounts with five TOTP factors each, enrolled through the v2 API. */
  static async prepare(target: BenchHearth, users: number, concurrency: number): Promise<TotpSignInLoad> {
    const byUser: Factor[][] = [];
    let nextUser = 0;
    const worker = async (): Promise<void> => {
      for (let i = nextUser++; i < users; i = nextUser++) byUser[i] = await enrolledUser(target, i);
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    // Interleaved, so requests in flight together are for different accounts (not one account's five factors).
    const factors = byUser[0]!.flatMap((_, f) => byUser.map((factors) => factors[f]!));
    const keys = SealingKeys.open(join(target.hearth.options.dataDir, 'mfa-key'));
    return new TotpSignInLoad(factors, new PendingCredentials(keys, Date.now), target.hearth.options.defaultProjectId);
  }

  /**
   * Fresh, valid bodies for one run (measureLoad draws a list per run, as many as the run makes):
   * codes the factors have left in this time window, up to `max`. The load client runs in another process, so the bodies
   * are drawn ahead rather than on demand; a run that outlasts them gets replays, which fail it.
   */
  bodies(max = 12_000): readonly string[] {
    const list: string[] = [];
    while (list.length < max) {
      const body = this.tryBody();
      if (body === undefined) break;
      list.push(body);
    }
    if (list.length === 0) throw new Error('every TOTP factor has used its codes for this time window: raise BENCH_MFA_USERS');
    return list;
  }

  private tryBody(): string | undefined {
    const current = Math.floor(Date.now() / 1000 / period);
    for (let tries = 0; tries < this.factors.length; tries++) {
      const factor = this.factors[this.next++ % this.factors.length]!;
      const step = Math.max(factor.lastStep + 1, current - reach);
      if (step > current + reach) continue;
      factor.lastStep = step;
      return JSON.stringify({
        mfaPendingCredential: this.pending.issue(this.projectId, factor, 'password'),
        mfaEnrollmentId: factor.enrollmentId,
        totpVerificationInfo: { verificationCode: TOTP.generate({ secret: factor.secret, timestamp: step * period * 1000 }) },
      });
    }
    return undefined;
  }
}

async function enrolledUser(target: BenchHearth, index: number): Promise<Factor[]> {
  const v1 = (path: string, body: unknown) => post(`${target.url}/identitytoolkit.googleapis.com/v1/${path}?key=${target.apiKey}`, JSON.stringify(body), 'application/json');
  const v2 = (path: string, body: unknown) => post(`${target.url}/identitytoolkit.googleapis.com/v2/accounts/${path}?key=${target.apiKey}`, JSON.stringify(body), 'application/json');
  const project = target.hearth.options.defaultProjectId;
  const created = await v1('accounts:signUp', { email: `bench-mfa-${index}@example.com`, password: `bench-password-${index}`, returnSecureToken: true });
  const localId = String(created.localId);
  const admin = { 'content-type': 'application/json', authorization: `Bearer ${target.hearth.adminKey}` };
  const verified = await fetch(`${target.url}/identitytoolkit.googleapis.com/v1/projects/${project}/accounts:update`, { method: 'POST', headers: admin, body: JSON.stringify({ localId, emailVerified: true }) });
  if (!verified.ok) throw new Error(`verifying the bench user's email answered ${verified.status}`);
  let idToken = String(created.idToken);
  const factors: Factor[] = [];
  for (let f = 0; f < 5; f++) {
    const start = (await v2('mfaEnrollment:start', { idToken, totpEnrollmentInfo: {} })).totpSessionInfo as { sharedSecretKey: string; sessionInfo: string };
    const secret = Secret.fromBase32(start.sharedSecretKey);
    // Enrolled with the oldest code the window takes, leaving the later ones for the load.
    const step = Math.floor(Date.now() / 1000 / period) - reach;
    const code = TOTP.generate({ secret, timestamp: step * period * 1000 });
    idToken = String((await v2('mfaEnrollment:finalize', { idToken, displayName: `app ${f}`, totpVerificationInfo: { sessionInfo: start.sessionInfo, verificationCode: code } })).idToken);
    factors.push({ localId, createdAt: 0, enrollmentId: '', secret, lastStep: step });
  }
  const lookup = await v1('accounts:lookup', { idToken });
  const user = (lookup.users as Array<{ createdAt: string; mfaInfo: Array<{ mfaEnrollmentId: string }> }>)[0]!;
  return factors.map((factor, i) => ({ ...factor, createdAt: Number(user.createdAt), enrollmentId: user.mfaInfo[i]!.mfaEnrollmentId }));
}

/** One finalize, checked by content, so the load run hits a working endpoint. */
export async function smokeTestTotpSignIn(target: BenchHearth, load: TotpSignInLoad): Promise<void> {
  const answer = await post(target.url + totpSignInPath(target.apiKey), load.bodies(1)[0]!, 'application/json');
  if (typeof answer.idToken !== 'string' || typeof answer.refreshToken !== 'string') throw new Error(`mfaSignIn:finalize answered ${JSON.stringify(answer)}`);
  const claims = JSON.parse(Buffer.from(answer.idToken.split('.')[1]!, 'base64url').toString()) as { firebase: { sign_in_second_factor?: string } };
  if (claims.firebase.sign_in_second_factor !== 'totp') throw new Error('the ID token does not name the TOTP second factor');
}
