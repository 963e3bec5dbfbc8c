import type { TotpFactorRecord } from '../../storage/store.js';

export type MfaState = 'ENABLED' | 'DISABLED';
export type TotpAlgorithm = TotpFactorRecord['hashingAlgorithm'];

export interface TotpProviderConfig {
  state: MfaState;
  totpProviderConfig: {
    /** How many time steps either side of now a code may come from (clock skew): 0 to 10. */
    adjacentIntervals: number;
  };
}

/**
 * The project's `mfa` block, in Identity Platform's MultiFactorConfig shape (what firebase-admin's
 * projectConfigManager reads and writes), plus `totpCodeFormat`, Hearth's own: Google fixes those.
 */
export interface MultiFactorConfig {
  state: MfaState;
  /** Second factors by SMS: ['PHONE_SMS'] or []. */
  enabledProviders: Array<'PHONE_SMS'>;
  /** TOTP (Google lists it here, not in enabledProviders). */
  providerConfigs: TotpProviderConfig[];
  /** How new TOTP enrolments make codes; each enrolment keeps the format it was made with. */
  totpCodeFormat: { hashingAlgorithm: TotpAlgorithm; verificationCodeLength: number; periodSec: number };
}

export const totpAlgorithms: readonly TotpAlgorithm[] = ['SHA1', 'SHA256', 'SHA512'];
export const maxAdjacentIntervals = 10;

/**
 * On by default, in --dev and outside it: a user only gets a second factor by enrolling one, and
 * the web app offers it out of the box. Google's defaults for the code format (SHA1, six digits,
 * 30 seconds, the only one every authenticator app reads) and the window (five steps either side).
 */
export function defaultMfaConfig(): MultiFactorConfig {
  return {
    state: 'ENABLED',
    enabledProviders: ['PHONE_SMS'],
    providerConfigs: [{ state: 'ENABLED', totpProviderConfig: { adjacentIntervals: 5 } }],
    totpCodeFormat: { hashingAlgorithm: 'SHA1', verificationCodeLength: 6, periodSec: 30 },
  };
}

/** A stored (possibly older, possibly partial) block over the defaults. */
export function mfaConfigWithDefaults(stored: Partial<MultiFactorConfig> | undefined): MultiFactorConfig {
  const defaults = defaultMfaConfig();
  return {
    state: stored?.state ?? defaults.state,
    enabledProviders: stored?.enabledProviders ?? defaults.enabledProviders,
    providerConfigs: stored?.providerConfigs ?? defaults.providerConfigs,
    totpCodeFormat: { ...defaults.totpCodeFormat, ...stored?.totpCodeFormat },
  };
}

export function mfaEnabled(config: MultiFactorConfig): boolean {
  return config.state === 'ENABLED';
}

export function smsFactorsEnabled(config: MultiFactorConfig): boolean {
  return mfaEnabled(config) && config.enabledProviders.includes('PHONE_SMS');
}

export function totpFactorsEnabled(config: MultiFactorConfig): boolean {
  return mfaEnabled(config) && config.providerConfigs.some((p) => p.state === 'ENABLED');
}

/** The window for TOTP codes: the enabled TOTP provider's, or Google's default of 5 when it was switched off. */
export function adjacentIntervals(config: MultiFactorConfig): number {
  return config.providerConfigs.find((p) => p.state === 'ENABLED')?.totpProviderConfig.adjacentIntervals ?? 5;
}

/** Why a block cannot be used, or undefined. */
export function checkMfaConfig(config: MultiFactorConfig): string | undefined {
  if (config.providerConfigs.length > 1) return 'mfa.providerConfigs holds one TOTP provider config at most.';
  for (const provider of config.providerConfigs) {
    const intervals = provider.totpProviderConfig?.adjacentIntervals;
    if (!Number.isInteger(intervals) || intervals < 0 || intervals > maxAdjacentIntervals) {
      return `mfa.providerConfigs.totpProviderConfig.adjacentIntervals must be a whole number from 0 to ${maxAdjacentIntervals}.`;
    }
  }
  const format = config.totpCodeFormat;
  if (!totpAlgorithms.includes(format.hashingAlgorithm)) return `mfa.totpCodeFormat.hashingAlgorithm must be one of ${totpAlgorithms.join(', ')}.`;
  if (!Number.isInteger(format.verificationCodeLength) || format.verificationCodeLength < 6 || format.verificationCodeLength > 8) {
    return 'mfa.totpCodeFormat.verificationCodeLength must be 6, 7 or 8.';
  }
  if (!Number.isInteger(format.periodSec) || format.periodSec < 15 || format.periodSec > 120) return 'mfa.totpCodeFormat.periodSec must be from 15 to 120 seconds.';
  return undefined;
}

/** The JSON Schema of the `mfa` block in a config PATCH (shapes only; checkMfaConfig judges values). */
export const mfaConfigPatchSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    state: { enum: ['ENABLED', 'DISABLED'] },
    enabledProviders: { type: 'array', maxItems: 1, items: { enum: ['PHONE_SMS'] } },
    providerConfigs: {
      type: 'array',
      maxItems: 1,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['state', 'totpProviderConfig'],
        properties: {
          state: { enum: ['ENABLED', 'DISABLED'] },
          totpProviderConfig: { type: 'object', additionalProperties: false, properties: { adjacentIntervals: { type: 'integer' } } },
        },
      },
    },
    totpCodeFormat: {
      type: 'object',
      additionalProperties: false,
      properties: {
        hashingAlgorithm: { enum: [...totpAlgorithms] },
        verificationCodeLength: { type: 'integer' },
        periodSec: { type: 'integer' },
      },
    },
  },
};

export type MfaConfigPatch = Partial<Omit<MultiFactorConfig, 'providerConfigs' | 'totpCodeFormat'>> & {
  providerConfigs?: Array<{ state: MfaState; totpProviderConfig: { adjacentIntervals?: number } }>;
  totpCodeFormat?: Partial<MultiFactorConfig['totpCodeFormat']>;
};

/** The `mfa.*` paths an updateMask may name. */
export const mfaConfigPaths = ['mfa.state', 'mfa.enabledProviders', 'mfa.providerConfigs', 'mfa.totpCodeFormat'];

/** Applies a PATCH's `mfa` block to `current` for the paths `wanted` says. */
export function applyMfaPatch(current: MultiFactorConfig, patch: MfaConfigPatch | undefined, wanted: (path: string) => boolean): MultiFactorConfig {
  const next = structuredClone(current);
  if (!patch) return next;
  if (wanted('mfa.state') && patch.state !== undefined) next.state = patch.state;
  if (wanted('mfa.enabledProviders') && patch.enabledProviders !== undefined) next.enabledProviders = [...new Set(patch.enabledProviders)];
  if (wanted('mfa.providerConfigs') && patch.providerConfigs !== undefined) {
    next.providerConfigs = patch.providerConfigs.map((p) => ({ state: p.state, totpProviderConfig: { adjacentIntervals: p.totpProviderConfig.adjacentIntervals ?? 5 } }));
  }
  if (wanted('mfa.totpCodeFormat') && patch.totpCodeFormat !== undefined) next.totpCodeFormat = { ...next.totpCodeFormat, ...patch.totpCodeFormat };
  return next;
}
