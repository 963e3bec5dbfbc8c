import Database from 'better-sqlite3';
import { StoreConflict, type HandlerSessionRecord, type Mutation } from '../store.js';

type HandlerSessionMutation = Extract<Mutation, { kind: 'putHandlerSession' | 'updateHandlerSession' | 'deleteHandlerSession' | 'deleteExpiredHandlerSessions' }>;

/** The hosted sign-in handler's sessions (table `handler_sessions`), applied inside SqliteStore's commits. */
export class SqliteHandlerSessions {
  private readonly statements;

  constructor(db: Database.Database) {
    this.statements = {
      get: db.prepare<[string], { record: string }>('SELECT record FROM handler_sessions WHERE id = ?'),
      put: db.prepare(
        'INSERT INTO handler_sessions (id, expires_at, record) VALUES (?, ?, ?) ON CONFLICT (id) DO UPDATE SET expires_at = excluded.expires_at, record = excluded.record',
      ),
      remove: db.prepare('DELETE FROM handler_sessions WHERE id = ?'),
      update: db.prepare('UPDATE handler_sessions SET expires_at = ?, record = ? WHERE id = ?'),
      deleteExpired: db.prepare('DELETE FROM handler_sessions WHERE expires_at < ?'),
    };
  }

  get(id: string): HandlerSessionRecord | undefined {
    const row = this.statements.get.get(id);
    return row ? (JSON.parse(row.record) as HandlerSessionRecord) : undefined;
  }

  apply(m: HandlerSessionMutation): void {
    const s = this.statements;
    switch (m.kind) {
      case 'putHandlerSession':
        s.put.run(m.session.id, m.session.expiresAt, JSON.stringify(m.session));
        return;
      case 'updateHandlerSession':
        if (s.update.run(m.session.expiresAt, JSON.stringify(m.session), m.session.id).changes !== 1) throw new StoreConflict('code-used');
        return;
      case 'deleteHandlerSession':
        if (s.remove.run(m.id).changes !== 1) throw new StoreConflict('code-used');
        return;
      case 'deleteExpiredHandlerSessions':
        s.deleteExpired.run(m.expiredBefore);
        return;
    }
  }
}
