import type { KeyRingStore, SharedSecretStore } from '../key-ring-store.js';
import { inPgTransaction, type PgPool } from './pg-connection.js';

/**
 * A key ring in the `key_rings` table (identity schema). An update holds the ring's row lock for
 * its whole transaction, so when two instances find a rotation due at once, the second waits and
 * then sees the first one's new key instead of adding its own.
 */
export class PgKeyRing implements KeyRingStore {
  readonly shared = true;

  constructor(
    private readonly pool: PgPool,
    private readonly name: string,
  ) {}

  async read(): Promise<string | undefined> {
    const { rows } = await this.pool.query<{ keys: string }>('SELECT keys FROM key_rings WHERE name = $1', [this.name]);
    // The empty ring (a row locked before any key was made) is no ring yet.
    return rows[0]?.keys || undefined;
  }

  async update(change: (current: string | undefined) => Promise<string | undefined>): Promise<string | undefined> {
    return inPgTransaction(this.pool, async (client) => {
      // The row must exist to be locked: the empty ring stands for "none yet".
      await client.query("INSERT INTO key_rings (name, keys) VALUES ($1, '') ON CONFLICT (name) DO NOTHING", [this.name]);
      const { rows } = await client.query<{ keys: string }>('SELECT keys FROM key_rings WHERE name = $1 FOR UPDATE', [this.name]);
      const current = rows[0]?.keys || undefined;
      const next = await change(current);
      if (next === undefined) return current;
      await client.query('UPDATE key_rings SET keys = $2 WHERE name = $1', [this.name, next]);
      return next;
    });
  }
}

/** Instance secrets in the `shared_secrets` table: the first instance to ask makes each one. */
export class PgSharedSecrets implements SharedSecretStore {
  constructor(private readonly pool: PgPool) {}

  async getOrCreate(name: string, create: () => string): Promise<string> {
    await this.pool.query('INSERT INTO shared_secrets (name, secret) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING', [name, create()]);
    const { rows } = await this.pool.query<{ secret: string }>('SELECT secret FROM shared_secrets WHERE name = $1', [name]);
    return rows[0]!.secret;
  }
}
