import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { loadOrCreateCaptchaKey } from './auth/captcha/challenges.js';
import type { KeyRingStore } from './storage/key-ring-store.js';
import type { PgPool } from './storage/postgres/pg-connection.js';
import { PgKeyRing, PgSharedSecrets } from './storage/postgres/pg-shared-keys.js';
import { PgRulesStore } from './storage/postgres/pg-rules-store.js';
import { PgStore } from './storage/postgres/pg-store.js';
import type { RulesStore } from './storage/rules-store.js';
import type { SqliteStore } from './storage/sqlite/sqlite-store.js';
import type { Store } from './storage/store.js';

/**
 * Where identity and rules live: the SQLite file and the data folder for one process, or
 * PostgreSQL for several instances. Whatever the instances must agree on (accounts, codes, outbox,
 * throttle rows, key rings, the captcha and MFA sealing keys) goes to the database then; the admin
 * key stays per instance (HEARTH_ADMIN_KEY, or the data folder).
 */
export interface IdentityStorage {
  store: Store;
  rules: RulesStore;
  signingKeys: string | KeyRingStore;
  sessionCookieKeys: string | KeyRingStore;
  captchaKey: Buffer;
  /** Undefined: the MFA sealing key is the data folder's `mfa-key`. */
  mfaSealingKey?: Buffer;
}

export async function openIdentityStorage(dataDir: string, sqlite: SqliteStore, pgPool: PgPool | undefined): Promise<IdentityStorage> {
  if (!pgPool) {
    return {
      store: sqlite,
      rules: sqlite.rules(),
      signingKeys: join(dataDir, 'signing-keys.json'),
      sessionCookieKeys: join(dataDir, 'session-cookie-keys.json'),
      captchaKey: loadOrCreateCaptchaKey(dataDir),
    };
  }
  const store = await PgStore.open(pgPool);
  const secrets = new PgSharedSecrets(pgPool);
  const newKey = () => randomBytes(32).toString('base64url');
  return {
    store,
    rules: await PgRulesStore.open(pgPool),
    signingKeys: new PgKeyRing(pgPool, 'signing-keys'),
    sessionCookieKeys: new PgKeyRing(pgPool, 'session-cookie-keys'),
    captchaKey: Buffer.from(await secrets.getOrCreate('captcha-key', newKey), 'base64url'),
    mfaSealingKey: Buffer.from(await secrets.getOrCreate('mfa-key', newKey), 'base64url'),
  };
}
