import type { FilesStore, ListObjectsQuery, ObjectEvent, ObjectEventKind, PutObjectOptions, PutObjectResult, StoredObject, UploadSession } from '../files-store.js';
import { applyPgMigrations, inPgTransaction, type PgClient, type PgPool } from './pg-connection.js';
import { num } from './pg-rows.js';

/**
 * Schema steps of component 'files' (append only): the same rows as the SQLite file's. Names
 * compare as bytes (COLLATE "C"), as in SQLite, so listings and page tokens mean the same on both.
 */
export const filesSchemaSteps: readonly string[] = [
  `
  CREATE TABLE files_objects (
    bucket TEXT COLLATE "C" NOT NULL,
    name TEXT COLLATE "C" NOT NULL,
    project_id TEXT NOT NULL,
    generation TEXT NOT NULL,
    metageneration BIGINT NOT NULL,
    size BIGINT NOT NULL,
    blob_key TEXT NOT NULL,
    record TEXT NOT NULL,
    PRIMARY KEY (bucket, name)
  );
  CREATE INDEX files_objects_blob ON files_objects (blob_key);
  CREATE TABLE files_usage (
    project_id TEXT PRIMARY KEY,
    bytes BIGINT NOT NULL
  );
  CREATE TABLE files_uploads (
    upload_id TEXT PRIMARY KEY,
    expires_at BIGINT NOT NULL,
    received BIGINT NOT NULL,
    state TEXT NOT NULL,
    record TEXT NOT NULL
  );
  CREATE INDEX files_uploads_expiry ON files_uploads (expires_at);
  CREATE TABLE files_events (
    id BIGSERIAL PRIMARY KEY,
    project_id TEXT NOT NULL,
    bucket TEXT NOT NULL,
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    at BIGINT NOT NULL,
    object TEXT NOT NULL
  );
  `,
];

/**
 * Cloud Storage metadata on PostgreSQL, shared by every instance: a change locks the object's row
 * (and the project's usage row when the quota is checked) in one READ COMMITTED transaction, so two
 * instances writing one name settle in one order and the bytes in use stay exact.
 */
export class PgFilesStore implements FilesStore {
  private constructor(private readonly pool: PgPool) {}

  static async open(pool: PgPool): Promise<PgFilesStore> {
    await applyPgMigrations(pool, 'files', filesSchemaSteps);
    return new PgFilesStore(pool);
  }

  async getObject(bucket: string, name: string): Promise<StoredObject | undefined> {
    const { rows } = await this.pool.query<{ record: string }>('SELECT record FROM files_objects WHERE bucket = $1 AND name = $2', [bucket, name]);
    return rows[0] ? (JSON.parse(rows[0].record) as StoredObject) : undefined;
  }

  async listObjects(query: ListObjectsQuery): Promise<StoredObject[]> {
    const { rows } = await this.pool.query<{ name: string; record: string }>('SELECT name, record FROM files_objects WHERE bucket = $1 AND name >= $2 ORDER BY name LIMIT $3', [
      query.bucket,
      query.startAt,
      query.limit,
    ]);
    const end = rows.findIndex((row) => !row.name.startsWith(query.prefix));
    return (end < 0 ? rows : rows.slice(0, end)).map((row) => JSON.parse(row.record) as StoredObject);
  }

  async putObject(object: StoredObject, options: PutObjectOptions = {}): Promise<PutObjectResult> {
    return inPgTransaction(this.pool, async (client): Promise<PutObjectResult> => {
      // The row is made first (empty if new) so that concurrent writers of one name queue on its lock.
      await client.query(
        `INSERT INTO files_objects (bucket, name, project_id, generation, metageneration, size, blob_key, record) VALUES ($1, $2, $3, '', 0, 0, '', '') ON CONFLICT (bucket, name) DO NOTHING`,
        [object.bucket, object.name, object.projectId],
      );
      const { rows } = await client.query<{ record: string }>('SELECT record FROM files_objects WHERE bucket = $1 AND name = $2 FOR UPDATE', [object.bucket, object.name]);
      const record = rows[0]?.record ?? '';
      const replaced = record ? (JSON.parse(record) as StoredObject) : undefined;
      if (options.ifGenerationMatch !== undefined && options.ifGenerationMatch !== (replaced?.generation ?? '0')) {
        if (!replaced) await client.query('DELETE FROM files_objects WHERE bucket = $1 AND name = $2', [object.bucket, object.name]);
        return { kind: 'precondition-failed' };
      }
      const growth = object.size - (replaced?.projectId === object.projectId ? replaced.size : 0);
      if (options.quotaBytes !== undefined && growth > 0) {
        await client.query('INSERT INTO files_usage (project_id, bytes) VALUES ($1, 0) ON CONFLICT (project_id) DO NOTHING', [object.projectId]);
        const usage = await client.query<{ bytes: string }>('SELECT bytes FROM files_usage WHERE project_id = $1 FOR UPDATE', [object.projectId]);
        const used = num(usage.rows[0]?.bytes ?? 0);
        if (used + growth > options.quotaBytes) {
          if (!replaced) await client.query('DELETE FROM files_objects WHERE bucket = $1 AND name = $2', [object.bucket, object.name]);
          return { kind: 'over-quota', usedBytes: used };
        }
      }
      if (replaced) {
        await addUsage(client, replaced.projectId, -replaced.size);
        await recordEvent(client, 'delete', replaced);
      }
      await addUsage(client, object.projectId, object.size);
      await client.query(
        'UPDATE files_objects SET project_id = $3, generation = $4, metageneration = $5, size = $6, blob_key = $7, record = $8 WHERE bucket = $1 AND name = $2',
        [object.bucket, object.name, object.projectId, object.generation, object.metageneration, object.size, object.blobKey, JSON.stringify(object)],
      );
      await recordEvent(client, 'finalize', object);
      return replaced ? { kind: 'stored', replaced } : { kind: 'stored' };
    });
  }

  async updateObject(object: StoredObject, expectedMetageneration: number): Promise<boolean> {
    return inPgTransaction(this.pool, async (client) => {
      const result = await client.query(
        'UPDATE files_objects SET metageneration = $1, record = $2 WHERE bucket = $3 AND name = $4 AND generation = $5 AND metageneration = $6',
        [object.metageneration, JSON.stringify(object), object.bucket, object.name, object.generation, expectedMetageneration],
      );
      if (result.rowCount !== 1) return false;
      await recordEvent(client, 'metadataUpdate', object);
      return true;
    });
  }

  async deleteObject(bucket: string, name: string, ifGenerationMatch?: string): Promise<StoredObject | undefined> {
    return inPgTransaction(this.pool, async (client) => {
      const { rows } = await client.query<{ record: string }>("SELECT record FROM files_objects WHERE bucket = $1 AND name = $2 AND record <> '' FOR UPDATE", [bucket, name]);
      if (!rows[0]) return undefined;
      const object = JSON.parse(rows[0].record) as StoredObject;
      if (ifGenerationMatch !== undefined && ifGenerationMatch !== object.generation) return undefined;
      await client.query('DELETE FROM files_objects WHERE bucket = $1 AND name = $2', [bucket, name]);
      await addUsage(client, object.projectId, -object.size);
      await recordEvent(client, 'delete', object);
      return object;
    });
  }

  async hasBlob(blobKey: string): Promise<boolean> {
    return ((await this.pool.query('SELECT 1 FROM files_objects WHERE blob_key = $1 LIMIT 1', [blobKey])).rowCount ?? 0) > 0;
  }

  async usedBytes(projectId: string): Promise<number> {
    const { rows } = await this.pool.query<{ bytes: string }>('SELECT bytes FROM files_usage WHERE project_id = $1', [projectId]);
    return num(rows[0]?.bytes ?? 0);
  }

  async events(afterId: string | undefined, limit: number): Promise<ObjectEvent[]> {
    const { rows } = await this.pool.query<{ id: string; kind: string; at: string; object: string }>('SELECT id, kind, at, object FROM files_events WHERE id > $1 ORDER BY id LIMIT $2', [
      afterId ?? '0',
      limit,
    ]);
    return rows.map((row) => ({ id: String(row.id), kind: row.kind as ObjectEventKind, at: num(row.at), object: JSON.parse(row.object) as StoredObject }));
  }

  async createUpload(session: UploadSession): Promise<void> {
    await this.pool.query('INSERT INTO files_uploads (upload_id, expires_at, received, state, record) VALUES ($1, $2, $3, $4, $5)', [
      session.uploadId,
      session.expiresAt,
      session.received,
      session.state,
      JSON.stringify(session),
    ]);
  }

  async getUpload(uploadId: string): Promise<UploadSession | undefined> {
    const { rows } = await this.pool.query<{ record: string }>('SELECT record FROM files_uploads WHERE upload_id = $1', [uploadId]);
    return rows[0] ? (JSON.parse(rows[0].record) as UploadSession) : undefined;
  }

  async advanceUpload(uploadId: string, expected: Pick<UploadSession, 'received' | 'state'>, next: Partial<UploadSession>): Promise<boolean> {
    return inPgTransaction(this.pool, async (client) => {
      const { rows } = await client.query<{ record: string }>('SELECT record FROM files_uploads WHERE upload_id = $1 AND state = $2 AND received = $3 FOR UPDATE', [
        uploadId,
        expected.state,
        expected.received,
      ]);
      if (!rows[0]) return false;
      const session = { ...(JSON.parse(rows[0].record) as UploadSession), ...next };
      await client.query('UPDATE files_uploads SET received = $2, state = $3, expires_at = $4, record = $5 WHERE upload_id = $1', [
        uploadId,
        session.received,
        session.state,
        session.expiresAt,
        JSON.stringify(session),
      ]);
      return true;
    });
  }

  async expiredUploads(now: number, limit: number): Promise<UploadSession[]> {
    const { rows } = await this.pool.query<{ record: string }>('SELECT record FROM files_uploads WHERE expires_at < $1 ORDER BY expires_at LIMIT $2', [now, limit]);
    return rows.map((row) => JSON.parse(row.record) as UploadSession);
  }

  async deleteUpload(uploadId: string): Promise<void> {
    await this.pool.query('DELETE FROM files_uploads WHERE upload_id = $1', [uploadId]);
  }
}

async function addUsage(client: PgClient, projectId: string, bytes: number): Promise<void> {
  await client.query('INSERT INTO files_usage (project_id, bytes) VALUES ($1, $2) ON CONFLICT (project_id) DO UPDATE SET bytes = files_usage.bytes + EXCLUDED.bytes', [projectId, bytes]);
}

async function recordEvent(client: PgClient, kind: ObjectEventKind, object: StoredObject): Promise<void> {
  await client.query('INSERT INTO files_events (project_id, bucket, name, kind, at, object) VALUES ($1, $2, $3, $4, $5, $6)', [
    object.projectId,
    object.bucket,
    object.name,
    kind,
    Date.now(),
    JSON.stringify(object),
  ]);
}
