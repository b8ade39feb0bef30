import { MigrationInterface, QueryRunner } from 'typeorm';

export class Foundation1763712000000 implements MigrationInterface {
  name = 'Foundation1763712000000';

  // created_at is kept to the millisecond so that keyset cursors, which carry a JavaScript Date,
  // compare exactly with the stored value.
  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE organizations (
        id text PRIMARY KEY,
        name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
        sponsored boolean NOT NULL DEFAULT false,
        created_at timestamptz(3) NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE products (
        id text PRIMARY KEY,
        organization_id text NOT NULL REFERENCES organizations(id),
        name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
        active boolean NOT NULL DEFAULT true,
        identity_key_id text NOT NULL UNIQUE,
        identity_secret text NOT NULL,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX products_organization_idx ON products (organization_id)`);
    await q.query(`
      CREATE TABLE environments (
        id text PRIMARY KEY,
        product_id text NOT NULL REFERENCES products(id),
        name text NOT NULL,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        UNIQUE (product_id, name)
      )`);
    await q.query(`
      CREATE TABLE teammates (
        id text PRIMARY KEY,
        organization_id text NOT NULL REFERENCES organizations(id),
        email text NOT NULL,
        role text NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
        created_at timestamptz(3) NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX teammates_org_email_idx ON teammates (organization_id, lower(email))`);
    await q.query(`
      CREATE TABLE teammate_sessions (
        id text PRIMARY KEY,
        teammate_id text NOT NULL REFERENCES teammates(id),
        token_digest text NOT NULL UNIQUE,
        csrf_token text NOT NULL,
        expires_at timestamptz NOT NULL,
        revoked_at timestamptz,
        created_at timestamptz(3) NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE service_keys (
        id text PRIMARY KEY,
        organization_id text NOT NULL REFERENCES organizations(id),
        product_id text REFERENCES products(id),
        environment text NOT NULL,
        digest text NOT NULL UNIQUE,
        prefix text NOT NULL,
        scopes text[] NOT NULL CHECK (cardinality(scopes) BETWEEN 1 AND 5),
        created_by text,
        expires_at timestamptz NOT NULL,
        revoked_at timestamptz,
        last_used_at timestamptz,
        rotated_from_id text REFERENCES service_keys(id),
        replaced_by_id text REFERENCES service_keys(id),
        created_at timestamptz(3) NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX service_keys_org_created_idx ON service_keys (organization_id, created_at DESC, id DESC)`);
    await q.query(`
      CREATE TABLE idempotency_records (
        credential_id text NOT NULL,
        idempotency_key text NOT NULL,
        request_hash text NOT NULL,
        state text NOT NULL CHECK (state IN ('in_progress', 'completed')),
        claim_token text NOT NULL,
        status_code integer,
        response_body text,
        locked_until timestamptz NOT NULL,
        expires_at timestamptz NOT NULL,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        PRIMARY KEY (credential_id, idempotency_key)
      )`);
    await q.query(`CREATE INDEX idempotency_records_expires_idx ON idempotency_records (expires_at)`);
    await q.query(`
      CREATE TABLE rate_limit_windows (
        key_id text NOT NULL,
        window_start timestamptz NOT NULL,
        count integer NOT NULL,
        PRIMARY KEY (key_id, window_start)
      )`);
    await q.query(`CREATE INDEX rate_limit_windows_start_idx ON rate_limit_windows (window_start)`);
    await q.query(`
      CREATE TABLE identity_nonces (
        product_id text NOT NULL,
        nonce text NOT NULL,
        expires_at timestamptz NOT NULL,
        PRIMARY KEY (product_id, nonce)
      )`);
    await q.query(`CREATE INDEX identity_nonces_expires_idx ON identity_nonces (expires_at)`);
    await q.query(`
      CREATE TABLE outbox_events (
        id text PRIMARY KEY,
        organization_id text NOT NULL REFERENCES organizations(id),
        product_id text REFERENCES products(id),
        event_type text NOT NULL,
        payload jsonb NOT NULL,
        available_at timestamptz NOT NULL DEFAULT now(),
        processed_at timestamptz,
        attempts integer NOT NULL DEFAULT 0,
        created_at timestamptz(3) NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX outbox_events_pending_idx ON outbox_events (available_at, id) WHERE processed_at IS NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of [
      'outbox_events', 'identity_nonces', 'rate_limit_windows', 'idempotency_records', 'service_keys',
      'teammate_sessions', 'teammates', 'environments', 'products', 'organizations',
    ]) {
      await q.query(`DROP TABLE ${table}`);
    }
  }
}
