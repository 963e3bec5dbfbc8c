import type { AuthOptions } from '../auth/auth-options.js';
import { noLimit } from '../auth/core/throttle.js';

/**
 * What `hearth start --dev` starts with instead of production's defaults, as Google's Auth
 * emulator has them, so an app's emulator-based test suite runs unchanged: email enumeration
 * protection off for new projects, mailed links at the emulator's /emulator/action, and no per-address, per-number, per-recipient or per-account
 * limit (an emulator run creates hundreds of accounts and texts the same test numbers again and
 * again from 127.0.0.1). A limit's flag given on the command line still applies (`explicit`).
 * Production's defaults are untouched: this is applied by the CLI for --dev only.
 */
export function withDevDefaults<Options extends AuthOptions>(options: Options, explicit: (flag: 'maxFailedSignins' | 'maxSignupsPerAddress' | 'maxSignupsPerProject') => boolean): Options {
  return {
    ...options,
    emailEnumerationProtection: false,
    emulatorActionLinks: true,
    smsLimits: { perNumber: noLimit, perAddress: noLimit },
    mailThrottle: noLimit,
    ...(explicit('maxFailedSignins') ? {} : { accountThrottle: noLimit, addressThrottle: noLimit }),
    signUpLimits: {
      perAddress: explicit('maxSignupsPerAddress') ? options.signUpLimits.perAddress : noLimit,
      perProject: explicit('maxSignupsPerProject') ? options.signUpLimits.perProject : noLimit,
    },
  };
}
