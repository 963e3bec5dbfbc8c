/** Schema steps too long to sit in migrations.ts's list. */

/**
 * Cloud Storage objects (files/): metadata rows (the bytes live in the byte store under blob_key),
 * bytes in use per project, resumable upload sessions, and the events functions will deliver.
 */
export const filesMigration = `
  CREATE TABLE files_objects (
    bucket TEXT NOT NULL,
    name TEXT NOT NULL,
    project_id TEXT NOT NULL,
    generation TEXT NOT NULL,
    metageneration INTEGER NOT NULL,
    size INTEGER NOT NULL,
    blob_key TEXT NOT NULL,
    record TEXT NOT NULL,
    PRIMARY KEY (bucket, name)
  ) WITHOUT ROWID;
  CREATE INDEX files_objects_blob ON files_objects (blob_key);
  CREATE TABLE files_usage (
    project_id TEXT PRIMARY KEY,
    bytes INTEGER NOT NULL
  ) WITHOUT ROWID;
  CREATE TABLE files_uploads (
    upload_id TEXT PRIMARY KEY,
    expires_at INTEGER NOT NULL,
    record TEXT NOT NULL
  ) WITHOUT ROWID;
  CREATE INDEX files_uploads_expiry ON files_uploads (expires_at);
  CREATE TABLE files_events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id TEXT NOT NULL,
    bucket TEXT NOT NULL,
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    at INTEGER NOT NULL,
    object TEXT NOT NULL
  );
`;

/**
 * Several processes on one file (--workers): each document commit's changes in fs_changes under a
 * per-database sequence (fs_log_seq), read by the other processes' change feeds and pruned with
 * the versions; NULL changes: the database was cleared or loaded. A mail being sent has a claim
 * (outbox_claims) until its outcome is committed or the claim's lease ends (a process that died
 * mid-send lets go that way). Every statement may run again (tests lower user_version to re-run
 * the steps after an older one).
 */
export const sharedFileMigration = `
  CREATE TABLE IF NOT EXISTS fs_changes (
    db TEXT NOT NULL,
    seq INTEGER NOT NULL,
    commit_time INTEGER NOT NULL,
    changes TEXT,
    PRIMARY KEY (db, seq)
  ) WITHOUT ROWID;
  CREATE INDEX IF NOT EXISTS fs_changes_time ON fs_changes (commit_time);
  CREATE TABLE IF NOT EXISTS fs_log_seq (
    db TEXT PRIMARY KEY,
    seq INTEGER NOT NULL
  ) WITHOUT ROWID;
  CREATE TABLE IF NOT EXISTS outbox_claims (
    id INTEGER PRIMARY KEY,
    owner TEXT NOT NULL,
    until INTEGER NOT NULL
  );
`;
