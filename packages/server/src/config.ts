import { resolve } from 'node:path';
import type { ThrottleLimits } from './auth/core/throttle.js';

export interface HearthOptions {
  port: number;
  host: string;
  /** Folder for the SQLite file, the signing keys and the admin key. */
  dataDir: string;
  /** Development mode: any API key names the default project and `Bearer owner` is an admin. */
  dev: boolean;
  /** The project that unknown API keys (dev) and the web app use. */
  defaultProjectId: string;
  /** Overrides the admin key kept in the data folder. */
  adminKey?: string;
  /** Built web app to serve at `/`; undefined serves none. */
  webRoot?: string;
  logLevel: string;
  recentLoginSeconds: number;
  accountThrottle: ThrottleLimits;
  addressThrottle: ThrottleLimits;
}

export const defaultWebRoot = resolve(import.meta.dirname, '../../web/dist');

export function defaultOptions(overrides: Partial<HearthOptions> = {}): HearthOptions {
  return {
    port: 9000,
    host: '127.0.0.1',
    dataDir: resolve('.hearth'),
    dev: false,
    defaultProjectId: 'demo-hearth',
    webRoot: defaultWebRoot,
    logLevel: 'info',
    recentLoginSeconds: 5 * 60,
    accountThrottle: { maxFailures: 10, windowMs: 15 * 60_000 },
    addressThrottle: { maxFailures: 100, windowMs: 15 * 60_000 },
    ...overrides,
  };
}
