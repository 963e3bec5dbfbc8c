import { join, resolve } from 'node:path';
import { SqliteStore } from '../../storage/sqlite/sqlite-store.js';
import { openPgPool } from '../../storage/postgres/pg-connection.js';
import { PgStore } from '../../storage/postgres/pg-store.js';
import type { Store } from '../../storage/store.js';
import { ServiceAccounts, tokenPath, UnknownServiceAccountKey } from './service-accounts.js';
import { writePrivateFileAtomically } from '../../storage/private-files.js';

export interface ServiceAccountCommandOptions {
  project: string;
  /** The data folder of the Hearth that will honour the key. */
  data: string;
}

/**
 * `hearth service-accounts ...`: works on the data folder directly (or on the PostgreSQL database
 * HEARTH_DATABASE_URL names), so a running server sees the change at once.
 */
async function withAccounts<T>(options: ServiceAccountCommandOptions, work: (accounts: ServiceAccounts) => Promise<T>): Promise<T> {
  const databaseUrl = process.env.HEARTH_DATABASE_URL;
  const store: Store = databaseUrl ? await PgStore.open(openPgPool(databaseUrl, { max: 2 }), { ownsPool: true }) : new SqliteStore(join(resolve(options.data), 'hearth.sqlite'));
  try {
    return await work(new ServiceAccounts(store));
  } finally {
    await store.close();
  }
}

/** Writes the new key file (0600, atomically) and returns its path; the private key exists nowhere else. */
export async function createServiceAccountKey(options: ServiceAccountCommandOptions & { publicUrl: string; out?: string }): Promise<string> {
  return withAccounts(options, async (accounts) => {
    const key = await accounts.createKey(options.project, `${options.publicUrl.replace(/\/$/, '')}${tokenPath}`);
    const out = resolve(options.out ?? `${options.project}-${key.private_key_id.slice(0, 12)}.json`);
    writePrivateFileAtomically(out, `${JSON.stringify(key, null, 2)}\n`);
    return out;
  });
}

export async function listServiceAccountKeys(options: ServiceAccountCommandOptions): Promise<string[]> {
  return withAccounts(options, async (accounts) => (await accounts.listKeys(options.project)).map((k) => `${k.keyId}  ${k.clientEmail}  created ${k.createdAt}`));
}

export async function revokeServiceAccountKey(options: ServiceAccountCommandOptions & { keyId: string }): Promise<void> {
  await withAccounts(options, async (accounts) => {
    try {
      await accounts.revokeKey(options.project, options.keyId);
    } catch (error) {
      if (error instanceof UnknownServiceAccountKey) throw new Error(`project ${options.project} has no key ${options.keyId}`);
      throw error;
    }
  });
}
