import type { Database } from 'better-sqlite3';
import { filesMigration, sharedFileMigration } from './migrations-steps.js';

/**
 * Firestore document ids are stored so that byte order is Firestore's id order: numeric ids
 * (__id7__) become 00 01 + hex and sort first; ids starting with NUL move behind 00 02 (storedId
 * in sqlite-document-store.ts). Before this, numeric ids were refused, so only ids starting with
 * NUL change. Exported for its test.
 */
export const storedIdsMigration = `
  UPDATE fs_documents SET doc_id = char(0, 2) || doc_id WHERE doc_id < char(1);
  UPDATE fs_index SET doc_id = char(0, 2) || doc_id WHERE doc_id < char(1);
`;

/**
 * Index values keep their first 1,000 bytes, as on PostgreSQL (storage/index-value-prefix.ts):
 * entries made before are cut the same way; two that now share a key become one. Exported for its test.
 */
export const indexPrefixMigration = `
  UPDATE OR IGNORE fs_index SET value = substr(value, 1, 1000) WHERE length(value) > 1000;
  DELETE FROM fs_index WHERE length(value) > 1000;
`;

/** Schema steps, applied in order once each; `PRAGMA user_version` records how far a file is. */
export const migrations: string[] = [
  `
  CREATE TABLE users (
    project_id TEXT NOT NULL,
    local_id TEXT NOT NULL,
    email TEXT,
    phone_number TEXT,
    version INTEGER NOT NULL,
    record TEXT NOT NULL,
    PRIMARY KEY (project_id, local_id)
  ) WITHOUT ROWID;
  CREATE UNIQUE INDEX users_email ON users (project_id, email) WHERE email IS NOT NULL;
  CREATE INDEX users_phone ON users (project_id, phone_number) WHERE phone_number IS NOT NULL;

  CREATE TABLE refresh_tokens (
    token_hash TEXT PRIMARY KEY,
    project_id TEXT NOT NULL,
    local_id TEXT NOT NULL,
    user_created_at INTEGER NOT NULL,
    issued_at INTEGER NOT NULL,
    auth_time INTEGER NOT NULL,
    sign_in_provider TEXT NOT NULL
  ) WITHOUT ROWID;
  CREATE INDEX refresh_tokens_user ON refresh_tokens (project_id, local_id);

  CREATE TABLE projects (
    project_id TEXT PRIMARY KEY,
    config TEXT NOT NULL
  ) WITHOUT ROWID;
  `,
  `
  CREATE TABLE oob_codes (
    code_hash TEXT PRIMARY KEY,
    project_id TEXT NOT NULL,
    expires_at INTEGER NOT NULL,
    record TEXT NOT NULL
  ) WITHOUT ROWID;
  CREATE INDEX oob_codes_expiry ON oob_codes (expires_at);

  CREATE TABLE outbox (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    message TEXT NOT NULL
  );
  CREATE INDEX outbox_project ON outbox (project_id, id);
  `,
  `
  -- One row per federated identity (not password/phone): who it is linked to, unique per project.
  CREATE TABLE user_providers (
    project_id TEXT NOT NULL,
    provider_id TEXT NOT NULL,
    raw_id TEXT NOT NULL,
    local_id TEXT NOT NULL,
    PRIMARY KEY (project_id, provider_id, raw_id)
  ) WITHOUT ROWID;
  CREATE INDEX user_providers_user ON user_providers (project_id, local_id);

  -- Federated sign-ins in flight: PKCE verifier, nonce and where to return, keyed by the OAuth state.
  CREATE TABLE handler_sessions (
    id TEXT PRIMARY KEY,
    expires_at INTEGER NOT NULL,
    record TEXT NOT NULL
  ) WITHOUT ROWID;
  CREATE INDEX handler_sessions_expiry ON handler_sessions (expires_at);
  `,
  `
  -- Firestore documents; db is 'project/database'. name_key is the order-preserving path encoding.
  CREATE TABLE fs_documents (
    db TEXT NOT NULL,
    parent TEXT NOT NULL,
    doc_id TEXT NOT NULL,
    collection_id TEXT NOT NULL,
    name_key BLOB NOT NULL,
    create_time INTEGER NOT NULL,
    update_time INTEGER NOT NULL,
    fields TEXT NOT NULL
  );
  CREATE UNIQUE INDEX fs_documents_key ON fs_documents (db, parent, doc_id);
  CREATE INDEX fs_documents_name ON fs_documents (db, name_key);
  CREATE INDEX fs_documents_group ON fs_documents (db, collection_id, name_key);

  -- Every field of every document, by collection: value order, then document id.
  -- kind 0: the field's value; 1: each distinct element of an array; 2: a declared composite index.
  CREATE TABLE fs_index (
    db TEXT NOT NULL,
    parent TEXT NOT NULL,
    field TEXT NOT NULL,
    kind INTEGER NOT NULL,
    value BLOB NOT NULL,
    doc_id TEXT NOT NULL,
    PRIMARY KEY (db, parent, field, kind, value, doc_id)
  ) WITHOUT ROWID;

  CREATE TABLE fs_meta (
    db TEXT PRIMARY KEY,
    last_commit_time INTEGER NOT NULL,
    index_set TEXT
  ) WITHOUT ROWID;
  `,
  `
  -- Security rules (the Firebase Rules API's shapes): every ruleset ever created is kept (history),
  -- and a release names the ruleset in force (release 'cloud.firestore' for the default database).
  CREATE TABLE rules_rulesets (
    project_id TEXT NOT NULL,
    ruleset_id TEXT NOT NULL,
    create_time INTEGER NOT NULL,
    source TEXT NOT NULL,
    PRIMARY KEY (project_id, ruleset_id)
  ) WITHOUT ROWID;
  CREATE INDEX rules_rulesets_time ON rules_rulesets (project_id, create_time);

  CREATE TABLE rules_releases (
    project_id TEXT NOT NULL,
    name TEXT NOT NULL,
    ruleset_id TEXT NOT NULL,
    create_time INTEGER NOT NULL,
    update_time INTEGER NOT NULL,
    PRIMARY KEY (project_id, name)
  ) WITHOUT ROWID;
  `,
  `
  -- The outbox is also the mail queue: a mail is a row before sendOobCode answers, and SMTP
  -- delivery works from the rows (state 'queued', due at next_attempt_at). Decoys (enumeration
  -- protection) are written like mails and deleted unsent. delivery: attempts, last error (JSON).
  ALTER TABLE outbox ADD COLUMN state TEXT NOT NULL DEFAULT 'kept';
  ALTER TABLE outbox ADD COLUMN decoy INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE outbox ADD COLUMN next_attempt_at INTEGER;
  ALTER TABLE outbox ADD COLUMN delivery TEXT;
  CREATE INDEX outbox_due ON outbox (next_attempt_at) WHERE state = 'queued';

  -- Throttle counters (failed sign-ins, mails sent), kept across restarts. key_hash is a SHA-256
  -- of the counted key (an account, an address), so no address is stored.
  CREATE TABLE throttle_state (
    scope TEXT NOT NULL,
    key_hash TEXT NOT NULL,
    expires_at INTEGER NOT NULL,
    state TEXT NOT NULL,
    PRIMARY KEY (scope, key_hash)
  ) WITHOUT ROWID;
  CREATE INDEX throttle_state_expiry ON throttle_state (expires_at);
  CREATE INDEX throttle_state_scope ON throttle_state (scope, expires_at);
  `,
  `
  -- Service-account keys: only the public half is kept (the private key is handed out once).
  -- Access tokens exchanged with a key are opaque and stored hashed; revoking a key deletes them.
  CREATE TABLE service_account_keys (
    project_id TEXT NOT NULL,
    key_id TEXT NOT NULL,
    client_email TEXT NOT NULL,
    public_key TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (project_id, key_id)
  ) WITHOUT ROWID;
  CREATE INDEX service_account_keys_email ON service_account_keys (client_email);

  CREATE TABLE service_account_tokens (
    token_hash TEXT PRIMARY KEY,
    project_id TEXT NOT NULL,
    key_id TEXT NOT NULL,
    expires_at INTEGER NOT NULL
  ) WITHOUT ROWID;
  CREATE INDEX service_account_tokens_key ON service_account_tokens (project_id, key_id);
  CREATE INDEX service_account_tokens_expiry ON service_account_tokens (expires_at);

  -- Claims a custom token carried, kept with the session so refreshed ID tokens carry them too.
  ALTER TABLE refresh_tokens ADD COLUMN developer_claims TEXT;
  `,
  `
  -- The reCAPTCHA stand-in: redeemed proof-of-work challenges and the tokens they bought, by hash;
  -- kept (used or not) until they expire, so single use holds across restarts.
  CREATE TABLE human_checks (
    key_hash TEXT PRIMARY KEY,
    project_id TEXT NOT NULL,
    expires_at INTEGER NOT NULL,
    used_at INTEGER
  ) WITHOUT ROWID;
  CREATE INDEX human_checks_expiry ON human_checks (expires_at);
  `,
  `
  -- SMS codes in flight and temporary proofs (issue 12): only hashes; tries counted in a column so
  -- taking one is a conditional update.
  CREATE TABLE phone_verifications (
    session_hash TEXT PRIMARY KEY,
    project_id TEXT NOT NULL,
    expires_at INTEGER NOT NULL,
    attempts_left INTEGER NOT NULL,
    record TEXT NOT NULL
  ) WITHOUT ROWID;
  CREATE INDEX phone_verifications_expiry ON phone_verifications (expires_at);

  -- Text messages kept for developers (always in --dev): the codes in plain text, so pruned by age.
  CREATE TABLE sms_outbox (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    message TEXT NOT NULL
  );
  CREATE INDEX sms_outbox_project ON sms_outbox (project_id, id);
  CREATE INDEX sms_outbox_created ON sms_outbox (created_at);

  -- A phone number belongs to one account per project. Administrators could give one number to
  -- several accounts before: the first by uid keeps it; the others lose it (and their phone
  -- provider entry), as they could not sign in with it anyway (lookups found one account).
  UPDATE users SET
      phone_number = NULL,
      record = json_set(
        json_remove(record, '$.phoneNumber'),
        '$.providerUserInfo',
        (SELECT json_group_array(json(value)) FROM json_each(users.record, '$.providerUserInfo') WHERE json_extract(value, '$.providerId') != 'phone'))
    WHERE phone_number IS NOT NULL
      AND EXISTS (SELECT 1 FROM users AS first
                  WHERE first.project_id = users.project_id AND first.phone_number = users.phone_number AND first.local_id < users.local_id);
  DROP INDEX users_phone;
  CREATE UNIQUE INDEX users_phone ON users (project_id, phone_number) WHERE phone_number IS NOT NULL;
  `,
  `
  -- The second factor a session passed (JSON {factorId, enrollmentId}), for refreshed ID tokens' claims.
  ALTER TABLE refresh_tokens ADD COLUMN second_factor TEXT;
  `,
  storedIdsMigration,
  `
  -- Superseded versions of Firestore documents, for reads at a past time (readTime): the version a
  -- commit replaced or deleted, with the time it stopped being current (until_time); pruned once
  -- it ended before the retention window. history_start: reads before it are refused (versions
  -- before this migration, or before a clear, were not kept).
  CREATE TABLE fs_versions (
    db TEXT NOT NULL,
    parent TEXT NOT NULL,
    doc_id TEXT NOT NULL,
    collection_id TEXT NOT NULL,
    name_key BLOB NOT NULL,
    create_time INTEGER NOT NULL,
    update_time INTEGER NOT NULL,
    until_time INTEGER NOT NULL,
    fields TEXT NOT NULL
  );
  CREATE UNIQUE INDEX fs_versions_key ON fs_versions (db, parent, doc_id, update_time);
  CREATE INDEX fs_versions_group ON fs_versions (db, collection_id, name_key);
  CREATE INDEX fs_versions_until ON fs_versions (until_time);
  ALTER TABLE fs_meta ADD COLUMN history_start INTEGER NOT NULL DEFAULT 0;
  UPDATE fs_meta SET history_start = last_commit_time;
  `,
  // The operator console's audit log (storage/audit-log.ts); AUTOINCREMENT so an id is never reused.
  `
  CREATE TABLE audit_log (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at INTEGER NOT NULL,
    operator TEXT NOT NULL,
    address TEXT NOT NULL,
    user_agent TEXT NOT NULL,
    method TEXT NOT NULL,
    path TEXT NOT NULL,
    status INTEGER NOT NULL,
    summary TEXT NOT NULL
  );
  `,
  indexPrefixMigration,
  filesMigration,
  // Trigger events (storage/trigger-events.ts): written by document commits (the writer thread, same
  // transaction), claimed and settled by the functions dispatcher. Times: commit_time µs, the rest ms.
  `
  CREATE TABLE fn_events (
    id TEXT PRIMARY KEY,
    target TEXT NOT NULL,
    db TEXT NOT NULL,
    path TEXT NOT NULL,
    commit_time INTEGER NOT NULL,
    payload TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    next_at INTEGER NOT NULL,
    lease_owner TEXT,
    lease_until INTEGER NOT NULL DEFAULT 0,
    set_aside INTEGER NOT NULL DEFAULT 0,
    last_error TEXT
  ) WITHOUT ROWID;
  CREATE INDEX fn_events_due ON fn_events (set_aside, next_at);
  `,
  // How far the functions domain has read each event source of its own (Cloud Storage's object events).
  `
  CREATE TABLE fn_cursors (source TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
  `,
  // Deleted accounts whose documents and files are still to be erased (storage/store.ts AccountErasure).
  `
  CREATE TABLE account_erasures (
    project_id TEXT NOT NULL,
    local_id TEXT NOT NULL,
    requested_at INTEGER NOT NULL,
    PRIMARY KEY (project_id, local_id)
  ) WITHOUT ROWID;
  `,
  // Declared vector fields beside their documents (storage/document-store.ts VectorEntry), so that
  // findNearest reads floats, not documents. Filled by the rebuild that follows a change of the
  // declared index set (an existing folder with vector indexes rebuilds once after this step).
  // A rowid table: its rows (a KiB of floats at 128 dimensions) are too wide for WITHOUT ROWID.
  `
  CREATE TABLE fs_vectors (
    db TEXT NOT NULL,
    parent TEXT NOT NULL,
    field TEXT NOT NULL,
    doc_id TEXT NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (db, parent, field, doc_id)
  );
  CREATE TABLE fs_vector_sets (
    db TEXT NOT NULL,
    parent TEXT NOT NULL,
    field TEXT NOT NULL,
    generation INTEGER NOT NULL,
    PRIMARY KEY (db, parent, field)
  ) WITHOUT ROWID;
  `,
  // Passkeys already enrolled get their index rows (storage/passkey-records.ts), so a credential id names one account.
  `
  INSERT OR IGNORE INTO user_providers (project_id, provider_id, raw_id, local_id)
    SELECT u.project_id, 'passkey', json_extract(p.value, '$.credentialId'), u.local_id
    FROM users u, json_each(u.record, '$.passkeys') p;
  `,
  // The console overview's "new today" reads an index, not every account's JSON (144 ms -> 0.4 at 100k accounts).
  `
  CREATE INDEX IF NOT EXISTS users_created ON users (project_id, json_extract(record, '$.createdAt'));
  `,
  sharedFileMigration,
];

/**
 * Every pending migration in one transaction: a new data folder is made with one commit (one
 * fsync, not one per step: a third of a second less at every first start), and a failed step
 * leaves the file as it was, at its old version.
 */
export function migrate(db: Database): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current >= migrations.length) return;
  db.transaction(() => {
    // Read again under the write lock: another process (a worker of --workers) may have migrated meanwhile.
    const now = db.pragma('user_version', { simple: true }) as number;
    for (let step = now; step < migrations.length; step++) db.exec(migrations[step]!);
    db.pragma(`user_version = ${migrations.length}`);
  }).immediate();
}

