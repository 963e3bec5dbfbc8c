import type { Mutation, OutboxMessage } from '../store.js';
import type { PgClient, PgPool } from './pg-connection.js';
import { outboxReads } from './pg-outbox-rows.js';

/** The advisory-lock key space of mail claims (two-key form), apart from the schema lock's. */
const mailLockSpace = 0x4d61696c; // "Mail"

/**
 * Which instance delivers a queued mail: the one holding the mail's advisory lock, taken when its
 * delivery loop lists the mail as due and let go once the attempt's outcome is committed. The
 * locks live on one session of this instance, so if the instance dies mid-attempt they go with
 * its connection and another instance (or its restart) picks the mail up at once: each mail is
 * sent once while instances live, at least once when one dies mid-send.
 */
export class PgMailClaims {
  private session: Promise<PgClient> | undefined;
  private readonly held = new Set<number>();

  constructor(private readonly pool: PgPool) {}

  /** Due mails this instance now holds (its own earlier claims included), oldest due first. */
  async claimDue(now: number, limit: number): Promise<Array<OutboxMessage & { decoy: boolean }>> {
    const candidates = await outboxReads.listDue(this.pool, now, limit);
    if (candidates.length === 0) return [];
    const session = await this.connect();
    const claimed: number[] = [];
    for (const { id } of candidates) {
      if (this.held.has(id) || (await this.tryLock(session, id))) {
        this.held.add(id);
        claimed.push(id);
      }
    }
    if (claimed.length === 0) return [];
    // Another instance may have finished a mail between the listing and the lock: read them again.
    const due = await outboxReads.listDue(this.pool, now, limit, claimed);
    const stillDue = new Set(due.map((mail) => mail.id));
    for (const id of claimed) if (!stillDue.has(id)) await this.release(id);
    return due;
  }

  /** After a commit: the mails whose outcome it recorded are no longer this instance's. */
  async settled(mutations: Mutation[]): Promise<void> {
    for (const m of mutations) {
      if ((m.kind === 'updateMailDelivery' || m.kind === 'deleteOutboxMessage') && this.held.has(m.id)) await this.release(m.id);
    }
  }

  async close(): Promise<void> {
    const session = this.session;
    this.session = undefined;
    this.held.clear();
    if (session) (await session.catch(() => undefined))?.release(true);
  }

  private connect(): Promise<PgClient> {
    this.session ??= this.pool.connect().then((client) => {
      // A dropped session took its locks with it: forget them, the next listing claims again.
      client.on('error', () => {
        this.session = undefined;
        this.held.clear();
      });
      return client;
    });
    return this.session;
  }

  private async tryLock(session: PgClient, id: number): Promise<boolean> {
    const { rows } = await session.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1, $2) AS locked', [mailLockSpace, lockKeyOf(id)]);
    return rows[0]!.locked;
  }

  private async release(id: number): Promise<void> {
    this.held.delete(id);
    const session = await this.session?.catch(() => undefined);
    await session?.query('SELECT pg_advisory_unlock($1, $2)', [mailLockSpace, lockKeyOf(id)]).catch(() => undefined);
  }
}

/** Ids past 2^31 share keys: a shared key only makes one of two mails wait for the other. */
function lockKeyOf(id: number): number {
  return id % 0x7fffffff;
}
