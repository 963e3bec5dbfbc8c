import { authError } from '../errors.js';

/** Identity Platform's `passwordPolicyConfig` (the shape firebase-admin's projectConfigManager writes). */
export interface PasswordPolicyConfig {
  passwordPolicyEnforcementState: 'OFF' | 'ENFORCE';
  /** When enforced: a sign-in with a password that no longer meets the policy is refused. */
  forceUpgradeOnSignin: boolean;
  passwordPolicyVersions: Array<{ customStrengthOptions: CustomStrengthOptions }>;
}

export interface CustomStrengthOptions {
  minPasswordLength?: number;
  maxPasswordLength?: number;
  containsLowercaseCharacter?: boolean;
  containsUppercaseCharacter?: boolean;
  containsNumericCharacter?: boolean;
  containsNonAlphanumericCharacter?: boolean;
}

/** The answer of GET /v2/passwordPolicy, which the client SDK's validatePassword() reads. */
export interface PasswordPolicyResponse {
  customStrengthOptions: CustomStrengthOptions;
  allowedNonAlphanumericCharacters: string[];
  enforcementState: 'OFF' | 'ENFORCE';
  forceUpgradeOnSignin: boolean;
  schemaVersion: 1;
}

/** Google's floor and ceiling: no policy can allow shorter or longer passwords. */
export const passwordLengthFloor = 6;
export const passwordLengthCeiling = 4096;

/** The characters that count as non-alphanumeric, as Google lists them (the SDK checks against this list too). */
export const allowedNonAlphanumericCharacters = [...'^$*.[]{}()?"!@#%&/\\,><\':;|_~`'];

export function defaultPasswordPolicy(): PasswordPolicyConfig {
  return {
    passwordPolicyEnforcementState: 'OFF',
    forceUpgradeOnSignin: false,
    passwordPolicyVersions: [{ customStrengthOptions: { minPasswordLength: passwordLengthFloor, maxPasswordLength: passwordLengthCeiling } }],
  };
}

/** Refuses a policy firebase-admin would refuse too, so the stored one is always usable. */
/** The update mask paths of a `passwordPolicyConfig`. */
export const passwordPolicyPaths = [
  'passwordPolicyConfig.passwordPolicyEnforcementState',
  'passwordPolicyConfig.forceUpgradeOnSignin',
  'passwordPolicyConfig.passwordPolicyVersions',
];

/** Applies a PATCH's `passwordPolicyConfig` to `current` (in place) for the paths `wanted` says. */
export function applyPasswordPolicyPatch(current: PasswordPolicyConfig, patch: Partial<PasswordPolicyConfig> | undefined, wanted: (path: string) => boolean): void {
  if (!patch) return;
  if (wanted('passwordPolicyConfig.passwordPolicyEnforcementState') && patch.passwordPolicyEnforcementState !== undefined) {
    current.passwordPolicyEnforcementState = patch.passwordPolicyEnforcementState === 'ENFORCE' ? 'ENFORCE' : 'OFF';
  }
  if (wanted('passwordPolicyConfig.forceUpgradeOnSignin') && patch.forceUpgradeOnSignin !== undefined) current.forceUpgradeOnSignin = patch.forceUpgradeOnSignin;
  if (wanted('passwordPolicyConfig.passwordPolicyVersions') && patch.passwordPolicyVersions !== undefined) {
    current.passwordPolicyVersions = patch.passwordPolicyVersions.map((v) => ({ customStrengthOptions: { ...v.customStrengthOptions } }));
  }
}

export function checkPasswordPolicy(policy: PasswordPolicyConfig): string | undefined {
  const options = currentOptions(policy);
  const min = options.minPasswordLength ?? passwordLengthFloor;
  const max = options.maxPasswordLength ?? passwordLengthCeiling;
  if (!Number.isInteger(min) || min < passwordLengthFloor || min > 30) return 'minPasswordLength must be an integer from 6 to 30.';
  if (!Number.isInteger(max) || max < min || max > passwordLengthCeiling) return 'maxPasswordLength must be an integer from minPasswordLength to 4096.';
  return undefined;
}

export function passwordPolicyResponse(policy: PasswordPolicyConfig): PasswordPolicyResponse {
  const options = currentOptions(policy);
  return {
    customStrengthOptions: { minPasswordLength: passwordLengthFloor, ...options },
    allowedNonAlphanumericCharacters,
    enforcementState: policy.passwordPolicyEnforcementState,
    forceUpgradeOnSignin: policy.passwordPolicyEnforcementState === 'ENFORCE' && policy.forceUpgradeOnSignin,
    schemaVersion: 1,
  };
}

/** What the password lacks, in Google's words; empty when it meets the policy. */
export function unmetRequirements(policy: PasswordPolicyConfig, password: string): string[] {
  const options = currentOptions(policy);
  const unmet: string[] = [];
  const length = [...password].length;
  const min = Math.max(options.minPasswordLength ?? passwordLengthFloor, passwordLengthFloor);
  if (length < min) unmet.push(`Password must contain at least ${min} characters`);
  if (options.maxPasswordLength !== undefined && length > options.maxPasswordLength) unmet.push(`Password may contain at most ${options.maxPasswordLength} characters`);
  if (options.containsLowercaseCharacter && !/[a-z]/.test(password)) unmet.push('Password must contain a lower case character');
  if (options.containsUppercaseCharacter && !/[A-Z]/.test(password)) unmet.push('Password must contain an upper case character');
  if (options.containsNumericCharacter && !/[0-9]/.test(password)) unmet.push('Password must contain a numeric character');
  if (options.containsNonAlphanumericCharacter && ![...password].some((c) => allowedNonAlphanumericCharacters.includes(c))) {
    unmet.push('Password must contain a non-alphanumeric character');
  }
  return unmet;
}

/** Throws PASSWORD_DOES_NOT_MEET_REQUIREMENTS when the policy is enforced and the password falls short. */
export function enforcePasswordPolicy(policy: PasswordPolicyConfig, password: string): void {
  if (policy.passwordPolicyEnforcementState !== 'ENFORCE') return;
  const unmet = unmetRequirements(policy, password);
  if (unmet.length) throw authError('PASSWORD_DOES_NOT_MEET_REQUIREMENTS', `Missing password requirements: [${unmet.join(', ')}]`);
}

function currentOptions(policy: PasswordPolicyConfig): CustomStrengthOptions {
  return policy.passwordPolicyVersions[0]?.customStrengthOptions ?? {};
}
