import { join } from 'node:path';
import type { AuditLog } from '../../storage/audit-log.js';
import type { Store } from '../../storage/store.js';
import type { AuthDeps } from '../core/auth-context.js';
import type { SessionService } from '../core/sessions.js';
import { BackoffThrottle } from '../core/throttle.js';
import { MfaGate } from './gate.js';
import type { MfaDeps } from './mfa-deps.js';
import { MfaEnrollmentService } from './mfa-enrollment.js';
import { MfaSignInService } from './mfa-sign-in.js';
import { PendingCredentials } from './pending-credentials.js';
import { RecoveryCodes, RecoveryCodeService } from './recovery-codes.js';
import { SealingKeys } from './sealing.js';
import { totpCodeLimits, totpFactorLimits, TotpVerifier } from './totp.js';

export interface MfaSetup {
  auth: AuthDeps;
  sessions: SessionService;
  store: Store;
  /** The sealing key lives here, as `mfa-key` (0600), beside the signing keys. */
  dataDir: string;
  /** The sealing key itself, when it is kept elsewhere (the shared database); then `dataDir` holds none. */
  sealingKey?: Buffer;
  clock: () => number;
  sms?: MfaDeps['sms'];
  /** Where uses of recovery codes are recorded (the console's audit log). */
  auditLog?: AuditLog;
}

export interface Mfa {
  gate: MfaGate;
  enrollment: MfaEnrollmentService;
  signIn: MfaSignInService;
  deps: MfaDeps;
  recoveryCodes: RecoveryCodeService;
}

/** The multi-factor services over one sealing key, one clock and the stored wrong-code counts. */
export async function createMfa(setup: MfaSetup): Promise<Mfa> {
  const keys = setup.sealingKey ? SealingKeys.withMaster(setup.sealingKey) : SealingKeys.open(join(setup.dataDir, 'mfa-key'));
  const pending = new PendingCredentials(keys, setup.clock);
  // Wrong codes are counted in the store: a restart does not forgive them.
  const throttles = {
    perFactorAndAddress: await BackoffThrottle.open(setup.store, 'mfa-totp-address', totpCodeLimits, setup.clock()),
    perFactor: await BackoffThrottle.open(setup.store, 'mfa-totp', totpFactorLimits, setup.clock()),
  };
  const deps: MfaDeps = { auth: setup.auth, sessions: setup.sessions, keys, pending, totp: new TotpVerifier(throttles, setup.clock), clock: setup.clock };
  if (setup.sms) deps.sms = setup.sms;
  // Wrong recovery codes are counted with the same throttles (under their own key per account).
  deps.recoveryCodes = new RecoveryCodes(keys, throttles, setup.clock, setup.auditLog);
  return { gate: new MfaGate(setup.auth.projects, pending), enrollment: new MfaEnrollmentService(deps), signIn: new MfaSignInService(deps), deps, recoveryCodes: new RecoveryCodeService(deps, deps.recoveryCodes) };
}
