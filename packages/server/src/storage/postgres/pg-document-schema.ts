/**
 * The documents' schema on PostgreSQL, steps applied in order under the component 'documents'
 * (only ever appended to). Everything that takes part in an order is BYTEA: PostgreSQL compares
 * bytea with memcmp, which is SQLite's BLOB (and BINARY text) order, so the index encoding and the
 * stored ids sort as they do on SQLite whatever the server's locale. Ids and paths are BYTEA too
 * (their UTF-8) because a stored id may hold NUL, which PostgreSQL TEXT refuses.
 */
export const documentSchemaSteps: readonly string[] = [
  `
  CREATE TABLE fs_documents (
    db TEXT COLLATE "C" NOT NULL,
    parent BYTEA NOT NULL,
    doc_id BYTEA NOT NULL,
    collection_id BYTEA NOT NULL,
    name_key BYTEA NOT NULL,
    create_time BIGINT NOT NULL,
    update_time BIGINT NOT NULL,
    fields TEXT NOT NULL,
    PRIMARY KEY (db, parent, doc_id)
  );
  CREATE INDEX fs_documents_name ON fs_documents (db, name_key);
  CREATE INDEX fs_documents_group ON fs_documents (db, collection_id, name_key);

  -- kind 0: a field's value; 1: each distinct element of an array; 2: a declared composite index.
  CREATE TABLE fs_index (
    db TEXT COLLATE "C" NOT NULL,
    parent BYTEA NOT NULL,
    field BYTEA NOT NULL,
    kind SMALLINT NOT NULL,
    value BYTEA NOT NULL,
    doc_id BYTEA NOT NULL,
    PRIMARY KEY (db, parent, field, kind, value, doc_id)
  );

  -- One row per database, locked by every commit of it: commit times strictly increase and the
  -- change sequence (seq) numbers commits in the order they become visible.
  CREATE TABLE fs_meta (
    db TEXT COLLATE "C" PRIMARY KEY,
    last_commit_time BIGINT NOT NULL DEFAULT 0,
    seq BIGINT NOT NULL DEFAULT 0,
    index_set TEXT,
    history_start BIGINT NOT NULL DEFAULT 0
  );

  -- Superseded versions, for reads at a past time (see sqlite-document-history.ts).
  CREATE TABLE fs_versions (
    db TEXT COLLATE "C" NOT NULL,
    parent BYTEA NOT NULL,
    doc_id BYTEA NOT NULL,
    collection_id BYTEA NOT NULL,
    name_key BYTEA NOT NULL,
    create_time BIGINT NOT NULL,
    update_time BIGINT NOT NULL,
    until_time BIGINT NOT NULL,
    fields TEXT NOT NULL,
    PRIMARY KEY (db, parent, doc_id, update_time)
  );
  CREATE INDEX fs_versions_name ON fs_versions (db, name_key);
  CREATE INDEX fs_versions_group ON fs_versions (db, collection_id, name_key);
  CREATE INDEX fs_versions_until ON fs_versions (until_time);

  -- The shared change feed: what each commit did, by database and sequence, read by every
  -- instance (woken by NOTIFY) and pruned with the versions. changes is JSON text (a path may hold
  -- NUL, which jsonb refuses); NULL changes: the database was cleared.
  CREATE TABLE fs_changes (
    db TEXT COLLATE "C" NOT NULL,
    seq BIGINT NOT NULL,
    commit_time BIGINT NOT NULL,
    changes TEXT,
    PRIMARY KEY (db, seq)
  );
  CREATE INDEX fs_changes_time ON fs_changes (commit_time);
  `,
  `
  -- Trigger events (storage/trigger-events.ts), inserted by commits in their own transaction and
  -- leased to one instance's dispatcher at a time (claims with FOR UPDATE SKIP LOCKED).
  CREATE TABLE fn_events (
    id TEXT PRIMARY KEY,
    target TEXT NOT NULL,
    db TEXT NOT NULL,
    path TEXT NOT NULL,
    commit_time BIGINT NOT NULL,
    payload TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    next_at BIGINT NOT NULL,
    lease_owner TEXT,
    lease_until BIGINT NOT NULL DEFAULT 0,
    set_aside BOOLEAN NOT NULL DEFAULT FALSE,
    last_error TEXT
  );
  CREATE INDEX fn_events_due ON fn_events (set_aside, next_at);
  `,
  `
  CREATE TABLE fn_cursors (source TEXT PRIMARY KEY, value TEXT NOT NULL);
  `,
  `
  -- Declared vector fields beside their documents (storage/document-store.ts VectorEntry), written
  -- in the commit's transaction; a set's generation rises with every change to its rows.
  CREATE TABLE fs_vectors (
    db TEXT COLLATE "C" NOT NULL,
    parent BYTEA NOT NULL,
    field BYTEA NOT NULL,
    doc_id BYTEA NOT NULL,
    vector BYTEA NOT NULL,
    PRIMARY KEY (db, parent, field, doc_id)
  );
  CREATE TABLE fs_vector_sets (
    db TEXT COLLATE "C" NOT NULL,
    parent BYTEA NOT NULL,
    field BYTEA NOT NULL,
    generation BIGINT NOT NULL,
    PRIMARY KEY (db, parent, field)
  );
  `,
];
