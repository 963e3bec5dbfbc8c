/**
 * The identity tables in PostgreSQL (component 'identity'), the same rows as the SQLite file's
 * (storage/sqlite/migrations.ts) so that `hearth migrate` copies them one for one. Times are
 * milliseconds since the epoch (BIGINT); JSON records are TEXT, read and written whole as in SQLite.
 * Columns that listings order by compare bytes (COLLATE "C"), as SQLite does, so pages and page
 * tokens mean the same on both. Steps are only ever appended to.
 */
export const identitySchemaSteps: readonly string[] = [
  `
  CREATE TABLE users (
    project_id TEXT NOT NULL,
    local_id TEXT COLLATE "C" NOT NULL,
    email TEXT,
    phone_number TEXT,
    version BIGINT NOT NULL,
    record TEXT NOT NULL,
    PRIMARY KEY (project_id, local_id)
  );
  CREATE UNIQUE INDEX users_email ON users (project_id, email) WHERE email IS NOT NULL;
  CREATE UNIQUE INDEX users_phone ON users (project_id, phone_number) WHERE phone_number IS NOT NULL;

  -- One row per federated identity (not password/phone): who it is linked to, unique per project.
  CREATE TABLE user_providers (
    project_id TEXT NOT NULL,
    provider_id TEXT NOT NULL,
    raw_id TEXT NOT NULL,
    local_id TEXT NOT NULL,
    PRIMARY KEY (project_id, provider_id, raw_id)
  );
  CREATE INDEX user_providers_user ON user_providers (project_id, local_id);

  CREATE TABLE refresh_tokens (
    token_hash TEXT PRIMARY KEY,
    project_id TEXT NOT NULL,
    local_id TEXT NOT NULL,
    user_created_at BIGINT NOT NULL,
    issued_at BIGINT NOT NULL,
    auth_time BIGINT NOT NULL,
    sign_in_provider TEXT NOT NULL,
    developer_claims TEXT,
    second_factor TEXT
  );
  CREATE INDEX refresh_tokens_user ON refresh_tokens (project_id, local_id);

  CREATE TABLE projects (
    project_id TEXT COLLATE "C" PRIMARY KEY,
    config TEXT NOT NULL
  );

  CREATE TABLE oob_codes (
    code_hash TEXT PRIMARY KEY,
    project_id TEXT NOT NULL,
    expires_at BIGINT NOT NULL,
    record TEXT NOT NULL
  );
  CREATE INDEX oob_codes_expiry ON oob_codes (expires_at);
  CREATE INDEX oob_codes_project ON oob_codes (project_id);

  -- The outbox is also the mail queue (see the SQLite schema); with several instances a due row
  -- is claimed by an advisory lock (pg-mail-claims.ts).
  CREATE TABLE outbox (
    id BIGSERIAL PRIMARY KEY,
    project_id TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    message TEXT NOT NULL,
    state TEXT NOT NULL DEFAULT 'kept',
    decoy BOOLEAN NOT NULL DEFAULT false,
    next_attempt_at BIGINT,
    delivery TEXT
  );
  CREATE INDEX outbox_project ON outbox (project_id, id);
  CREATE INDEX outbox_due ON outbox (next_attempt_at, id) WHERE state = 'queued';
  CREATE INDEX outbox_created ON outbox (created_at);

  CREATE TABLE handler_sessions (
    id TEXT PRIMARY KEY,
    expires_at BIGINT NOT NULL,
    record TEXT NOT NULL
  );
  CREATE INDEX handler_sessions_expiry ON handler_sessions (expires_at);

  CREATE TABLE throttle_state (
    scope TEXT NOT NULL,
    key_hash TEXT NOT NULL,
    expires_at BIGINT NOT NULL,
    state TEXT NOT NULL,
    PRIMARY KEY (scope, key_hash)
  );
  CREATE INDEX throttle_state_expiry ON throttle_state (expires_at);
  CREATE INDEX throttle_state_scope ON throttle_state (scope, expires_at);

  CREATE TABLE service_account_keys (
    project_id TEXT NOT NULL,
    key_id TEXT COLLATE "C" NOT NULL,
    client_email TEXT NOT NULL,
    public_key TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (project_id, key_id)
  );
  CREATE INDEX service_account_keys_email ON service_account_keys (client_email);

  CREATE TABLE service_account_tokens (
    token_hash TEXT PRIMARY KEY,
    project_id TEXT NOT NULL,
    key_id TEXT NOT NULL,
    expires_at BIGINT NOT NULL
  );
  CREATE INDEX service_account_tokens_key ON service_account_tokens (project_id, key_id);
  CREATE INDEX service_account_tokens_expiry ON service_account_tokens (expires_at);

  CREATE TABLE human_checks (
    key_hash TEXT PRIMARY KEY,
    project_id TEXT NOT NULL,
    expires_at BIGINT NOT NULL,
    used_at BIGINT
  );
  CREATE INDEX human_checks_expiry ON human_checks (expires_at);

  CREATE TABLE phone_verifications (
    session_hash TEXT PRIMARY KEY,
    project_id TEXT NOT NULL,
    expires_at BIGINT NOT NULL,
    attempts_left INTEGER NOT NULL,
    record TEXT NOT NULL
  );
  CREATE INDEX phone_verifications_expiry ON phone_verifications (expires_at);
  CREATE INDEX phone_verifications_project ON phone_verifications (project_id);

  CREATE TABLE sms_outbox (
    id BIGSERIAL PRIMARY KEY,
    project_id TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    message TEXT NOT NULL
  );
  CREATE INDEX sms_outbox_project ON sms_outbox (project_id, id);
  CREATE INDEX sms_outbox_created ON sms_outbox (created_at);

  -- What a single SQLite-backed process keeps in its data folder, shared here by every instance:
  -- key rings (token and session-cookie signing keys, rotated by whichever instance holds the row
  -- lock) and instance secrets (the captcha key, the MFA sealing key). Private keys: the database
  -- must be as private as the data folder is.
  CREATE TABLE key_rings (
    name TEXT PRIMARY KEY,
    keys TEXT NOT NULL
  );
  CREATE TABLE shared_secrets (
    name TEXT PRIMARY KEY,
    secret TEXT NOT NULL
  );
  `,
  // Deleted accounts whose documents and files are still to be erased (storage/store.ts AccountErasure).
  `
  CREATE TABLE account_erasures (
    project_id TEXT NOT NULL,
    local_id TEXT NOT NULL,
    requested_at BIGINT NOT NULL,
    PRIMARY KEY (project_id, local_id)
  );
  `,
  // Passkeys already enrolled get their index rows (storage/passkey-records.ts), so a credential id names one account.
  `
  INSERT INTO user_providers (project_id, provider_id, raw_id, local_id)
    SELECT u.project_id, 'passkey', p.value->>'credentialId', u.local_id
    FROM users u, jsonb_array_elements(COALESCE(u.record::jsonb->'passkeys', '[]'::jsonb)) p
    ON CONFLICT DO NOTHING;
  `,
  // The console overview's "new today" reads an index, not every account's JSON.
  `
  CREATE INDEX users_created ON users (project_id, ((record::jsonb ->> 'createdAt')::bigint));
  `,
];

/** Security rules (component 'rules'): every ruleset kept, releases naming the one in force. */
export const rulesSchemaSteps: readonly string[] = [
  `
  CREATE TABLE rules_rulesets (
    project_id TEXT NOT NULL,
    ruleset_id TEXT COLLATE "C" NOT NULL,
    create_time BIGINT NOT NULL,
    source TEXT NOT NULL,
    PRIMARY KEY (project_id, ruleset_id)
  );
  CREATE INDEX rules_rulesets_time ON rules_rulesets (project_id, create_time);

  CREATE TABLE rules_releases (
    project_id TEXT NOT NULL,
    name TEXT COLLATE "C" NOT NULL,
    ruleset_id TEXT NOT NULL,
    create_time BIGINT NOT NULL,
    update_time BIGINT NOT NULL,
    PRIMARY KEY (project_id, name)
  );
  `,
];
