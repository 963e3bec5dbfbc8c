import type Database from 'better-sqlite3';
import type { FilesStore, ListObjectsQuery, ObjectEvent, ObjectEventKind, PutObjectOptions, PutObjectResult, StoredObject, UploadSession } from '../files-store.js';

interface ObjectRow {
  name?: string;
  record: string;
}
interface EventRow {
  id: number;
  kind: string;
  at: number;
  object: string;
}

/**
 * Cloud Storage metadata in the same SQLite file as everything else (tables from the files
 * migration). Each change is one SQLite transaction on the main connection: the row, the project's
 * bytes in use and the event together. Names compare as bytes (SQLite's BINARY collation on UTF-8).
 */
export class SqliteFilesStore implements FilesStore {
  private readonly statements;

  constructor(
    private readonly db: Database.Database,
    /** Waits until a write on this connection cannot wait for SQLite's lock (SqliteStore). */
    private readonly writeTurn: () => Promise<void> = async () => undefined,
  ) {
    this.statements = {
      get: db.prepare<[string, string], ObjectRow>('SELECT record FROM files_objects WHERE bucket = ? AND name = ?'),
      list: db.prepare<[string, string, number], ObjectRow>('SELECT name, record FROM files_objects WHERE bucket = ? AND name >= ? ORDER BY name LIMIT ?'),
      put: db.prepare(
        'INSERT INTO files_objects (bucket, name, project_id, generation, metageneration, size, blob_key, record) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (bucket, name) DO UPDATE SET project_id = excluded.project_id, generation = excluded.generation, metageneration = excluded.metageneration, size = excluded.size, blob_key = excluded.blob_key, record = excluded.record',
      ),
      update: db.prepare('UPDATE files_objects SET metageneration = ?, record = ? WHERE bucket = ? AND name = ? AND generation = ? AND metageneration = ?'),
      delete: db.prepare('DELETE FROM files_objects WHERE bucket = ? AND name = ?'),
      hasBlob: db.prepare<[string], { one: number }>('SELECT 1 AS one FROM files_objects WHERE blob_key = ? LIMIT 1'),
      usage: db.prepare<[string], { bytes: number }>('SELECT bytes FROM files_usage WHERE project_id = ?'),
      addUsage: db.prepare('INSERT INTO files_usage (project_id, bytes) VALUES (?, ?) ON CONFLICT (project_id) DO UPDATE SET bytes = bytes + excluded.bytes'),
      event: db.prepare('INSERT INTO files_events (project_id, bucket, name, kind, at, object) VALUES (?, ?, ?, ?, ?, ?)'),
      events: db.prepare<[number, number], EventRow>('SELECT id, kind, at, object FROM files_events WHERE id > ? ORDER BY id LIMIT ?'),
      createUpload: db.prepare('INSERT INTO files_uploads (upload_id, expires_at, record) VALUES (?, ?, ?)'),
      getUpload: db.prepare<[string], { record: string }>('SELECT record FROM files_uploads WHERE upload_id = ?'),
      putUpload: db.prepare('UPDATE files_uploads SET record = ?, expires_at = ? WHERE upload_id = ?'),
      expiredUploads: db.prepare<[number, number], { record: string }>('SELECT record FROM files_uploads WHERE expires_at < ? ORDER BY expires_at LIMIT ?'),
      deleteUpload: db.prepare('DELETE FROM files_uploads WHERE upload_id = ?'),
    };
  }

  async getObject(bucket: string, name: string): Promise<StoredObject | undefined> {
    const row = this.statements.get.get(bucket, name);
    return row ? (JSON.parse(row.record) as StoredObject) : undefined;
  }

  async listObjects(query: ListObjectsQuery): Promise<StoredObject[]> {
    const rows = this.statements.list.all(query.bucket, query.startAt, query.limit);
    // Names with the prefix are contiguous in byte order: the first one without it ends them.
    const end = rows.findIndex((row) => !row.name!.startsWith(query.prefix));
    return (end < 0 ? rows : rows.slice(0, end)).map((row) => JSON.parse(row.record) as StoredObject);
  }

  async putObject(object: StoredObject, options: PutObjectOptions = {}): Promise<PutObjectResult> {
    await this.writeTurn();
    return this.db.transaction((): PutObjectResult => {
      const row = this.statements.get.get(object.bucket, object.name);
      const replaced = row ? (JSON.parse(row.record) as StoredObject) : undefined;
      if (options.ifGenerationMatch !== undefined && options.ifGenerationMatch !== (replaced?.generation ?? '0')) return { kind: 'precondition-failed' };
      const growth = object.size - (replaced?.projectId === object.projectId ? replaced.size : 0);
      if (options.quotaBytes !== undefined && growth > 0) {
        const used = this.statements.usage.get(object.projectId)?.bytes ?? 0;
        if (used + growth > options.quotaBytes) return { kind: 'over-quota', usedBytes: used };
      }
      if (replaced) {
        this.statements.addUsage.run(replaced.projectId, -replaced.size);
        this.recordEvent('delete', replaced);
      }
      this.statements.addUsage.run(object.projectId, object.size);
      this.statements.put.run(object.bucket, object.name, object.projectId, object.generation, object.metageneration, object.size, object.blobKey, JSON.stringify(object));
      this.recordEvent('finalize', object);
      return replaced ? { kind: 'stored', replaced } : { kind: 'stored' };
    }).immediate();
  }

  async updateObject(object: StoredObject, expectedMetageneration: number): Promise<boolean> {
    await this.writeTurn();
    return this.db.transaction(() => {
      const changed = this.statements.update.run(object.metageneration, JSON.stringify(object), object.bucket, object.name, object.generation, expectedMetageneration).changes === 1;
      if (changed) this.recordEvent('metadataUpdate', object);
      return changed;
    }).immediate();
  }

  async deleteObject(bucket: string, name: string, ifGenerationMatch?: string): Promise<StoredObject | undefined> {
    await this.writeTurn();
    return this.db.transaction(() => {
      const row = this.statements.get.get(bucket, name);
      if (!row) return undefined;
      const object = JSON.parse(row.record) as StoredObject;
      if (ifGenerationMatch !== undefined && ifGenerationMatch !== object.generation) return undefined;
      this.statements.delete.run(bucket, name);
      this.statements.addUsage.run(object.projectId, -object.size);
      this.recordEvent('delete', object);
      return object;
    }).immediate();
  }

  async hasBlob(blobKey: string): Promise<boolean> {
    return this.statements.hasBlob.get(blobKey) !== undefined;
  }

  async usedBytes(projectId: string): Promise<number> {
    return this.statements.usage.get(projectId)?.bytes ?? 0;
  }

  async events(afterId: string | undefined, limit: number): Promise<ObjectEvent[]> {
    return this.statements.events.all(afterId === undefined ? 0 : Number(afterId), limit).map((row) => ({
      id: String(row.id),
      kind: row.kind as ObjectEventKind,
      at: row.at,
      object: JSON.parse(row.object) as StoredObject,
    }));
  }

  async createUpload(session: UploadSession): Promise<void> {
    await this.writeTurn();
    this.statements.createUpload.run(session.uploadId, session.expiresAt, JSON.stringify(session));
  }

  async getUpload(uploadId: string): Promise<UploadSession | undefined> {
    const row = this.statements.getUpload.get(uploadId);
    return row ? (JSON.parse(row.record) as UploadSession) : undefined;
  }

  async advanceUpload(uploadId: string, expected: Pick<UploadSession, 'received' | 'state'>, next: Partial<UploadSession>): Promise<boolean> {
    await this.writeTurn();
    return this.db.transaction(() => {
      const row = this.statements.getUpload.get(uploadId);
      if (!row) return false;
      const session = JSON.parse(row.record) as UploadSession;
      if (session.state !== expected.state || session.received !== expected.received) return false;
      const updated = { ...session, ...next };
      this.statements.putUpload.run(JSON.stringify(updated), updated.expiresAt, uploadId);
      return true;
    }).immediate();
  }

  async expiredUploads(now: number, limit: number): Promise<UploadSession[]> {
    return this.statements.expiredUploads.all(now, limit).map((row) => JSON.parse(row.record) as UploadSession);
  }

  async deleteUpload(uploadId: string): Promise<void> {
    await this.writeTurn();
    this.statements.deleteUpload.run(uploadId);
  }

  private recordEvent(kind: ObjectEventKind, object: StoredObject): void {
    this.statements.event.run(object.projectId, object.bucket, object.name, kind, Date.now(), JSON.stringify(object));
  }
}
