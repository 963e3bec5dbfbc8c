import pg from 'pg';
import { LogChangeFeed, type ChangeLogSource } from '../log-change-feed.js';
import type { PgPool } from './pg-connection.js';
import { changeChannel, parseNotifyPayload } from './pg-change-log.js';

/**
 * Follows fs_changes for this process (log-change-feed.ts), woken by the NOTIFY each commit sends;
 * on reconnecting, whatever was notified while away is read at once.
 */

export interface PgChangeFeedOptions {
  pollMs?: number;
  reconnectMs?: number;
}

export class PgChangeFeed extends LogChangeFeed {
  private listenClient: pg.Client | undefined;
  private reconnect: NodeJS.Timeout | undefined;

  constructor(
    private readonly pool: PgPool,
    private readonly options: PgChangeFeedOptions = {},
  ) {
    super(pgChangeLog(pool), options.pollMs);
  }

  /** Listens, then takes every database's current sequence as the start. */
  override async start(): Promise<void> {
    await this.connectListener();
    await super.start();
  }

  override async close(): Promise<void> {
    await super.close();
    clearTimeout(this.reconnect);
    const client = this.listenClient;
    this.listenClient = undefined;
    await client?.end().catch(() => undefined);
  }

  private async connectListener(): Promise<void> {
    const client = new pg.Client(this.pool.options);
    const lost = () => {
      if (this.listenClient !== client) return;
      this.listenClient = undefined;
      client.end().catch(() => undefined);
      this.scheduleReconnect();
    };
    client.on('error', lost);
    client.on('end', lost);
    client.on('notification', (message) => {
      const note = parseNotifyPayload(message.payload);
      if (note) this.heard(note.db, note.seq);
    });
    await client.connect();
    await client.query(`LISTEN ${changeChannel}`);
    this.listenClient = client;
  }

  private scheduleReconnect(): void {
    if (this.closed) return;
    this.reconnect = setTimeout(() => {
      this.connectListener()
        // Whatever was notified while away is read now.
        .then(() => this.pollAll())
        .catch(() => this.scheduleReconnect());
    }, this.options.reconnectMs ?? 500);
    this.reconnect.unref();
  }
}

function pgChangeLog(pool: PgPool): ChangeLogSource {
  return {
    async sequences() {
      const { rows } = await pool.query<{ db: string; seq: string }>('SELECT db, seq FROM fs_meta');
      return rows.map((row) => ({ db: row.db, seq: Number(row.seq) }));
    },
    async sequenceOf(db) {
      const { rows } = await pool.query<{ seq: string }>('SELECT seq FROM fs_meta WHERE db = $1', [db]);
      return rows.length ? Number(rows[0]!.seq) : 0;
    },
    async readAfter(db, seq, limit) {
      const { rows } = await pool.query<{ seq: string; commit_time: string; changes: string | null }>(
        'SELECT seq, commit_time, changes FROM fs_changes WHERE db = $1 AND seq > $2 ORDER BY seq LIMIT $3',
        [db, seq, limit],
      );
      return rows.map((row) => ({ seq: Number(row.seq), commitTime: Number(row.commit_time), changes: row.changes }));
    },
  };
}
