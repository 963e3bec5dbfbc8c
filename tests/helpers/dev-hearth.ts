import type { Logger } from 'pino';
import { withDevDefaults } from '../../packages/server/src/cli/dev-defaults.js';
import { defaultOptions, type HearthOptions } from '../../packages/server/src/config.js';
import { startHearth, type TestHearth } from './hearth.js';

/**
 * Hearth in this process as `hearth start --dev` runs it: --dev plus the Auth emulator's defaults
 * the CLI adds (cli/dev-defaults.ts: no enumeration protection, no per-address or per-number
 * limits, links at /emulator/action). startHearth alone is --dev with production's defaults.
 */
export function startDevHearth(overrides: Partial<HearthOptions> = {}, logger?: Logger): Promise<TestHearth> {
  const dev = withDevDefaults(defaultOptions({ dev: true, ...overrides }), () => false);
  const { emailEnumerationProtection, emulatorActionLinks, smsLimits, mailThrottle, accountThrottle, addressThrottle, signUpLimits } = dev;
  return startHearth({ emailEnumerationProtection, emulatorActionLinks, smsLimits, mailThrottle, accountThrottle, addressThrottle, signUpLimits, ...overrides, dev: true }, logger);
}
