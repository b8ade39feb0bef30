import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The customer side of collection: drafts and their secrets, resumable uploads and their media,
 * control links and customer decisions on wording. Bytes live in the media store, never here.
 */
export class CollectionCustomer1763712650000 implements MigrationInterface {
  name = 'CollectionCustomer1763712650000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE collection_drafts (
        id text PRIMARY KEY,
        organization_id text NOT NULL REFERENCES organizations(id),
        product_id text NOT NULL REFERENCES products(id),
        flow_id text NOT NULL,
        flow_version_id text NOT NULL,
        request_id text,
        person_ref text,
        end_user_id text,
        source text NOT NULL CHECK (source IN ('public', 'link', 'continuation', 'end_user', 'key', 'nojs')),
        verified boolean NOT NULL,
        status text NOT NULL CHECK (status IN ('open', 'submitted', 'expired')),
        revision integer NOT NULL DEFAULT 1,
        fields jsonb NOT NULL DEFAULT '{}',
        proof_item_id text REFERENCES proof_items(id),
        submitted_at timestamptz,
        expires_at timestamptz NOT NULL,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX collection_drafts_open_expiry_idx ON collection_drafts (expires_at) WHERE status = 'open'`);
    await q.query(`CREATE INDEX collection_drafts_request_idx ON collection_drafts (request_id) WHERE request_id IS NOT NULL`);
    await q.query(`
      CREATE TABLE collection_secrets (
        digest text PRIMARY KEY,
        kind text NOT NULL CHECK (kind IN ('draft_session', 'continuation', 'control', 'upload')),
        organization_id text NOT NULL REFERENCES organizations(id),
        product_id text NOT NULL REFERENCES products(id),
        draft_id text REFERENCES collection_drafts(id) ON DELETE CASCADE,
        upload_id text,
        person_ref text,
        expires_at timestamptz,
        used_at timestamptz,
        created_at timestamptz(3) NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX collection_secrets_draft_idx ON collection_secrets (draft_id)`);
    await q.query(`
      CREATE TABLE collection_uploads (
        id text PRIMARY KEY,
        organization_id text NOT NULL REFERENCES organizations(id),
        product_id text NOT NULL REFERENCES products(id),
        draft_id text NOT NULL REFERENCES collection_drafts(id) ON DELETE CASCADE,
        kind text NOT NULL CHECK (kind IN ('video', 'audio', 'image')),
        purpose text NOT NULL CHECK (purpose IN ('response', 'photo', 'logo')),
        question_id text,
        capture jsonb,
        status text NOT NULL CHECK (status IN ('open', 'assembling', 'complete', 'cancelled', 'expired')),
        size bigint NOT NULL,
        sha256 text NOT NULL,
        part_size integer NOT NULL,
        part_count integer NOT NULL,
        content_type text,
        asset_id text,
        last_error text CHECK (last_error IN ('CHECKSUM_MISMATCH', 'UNSUPPORTED_MEDIA_TYPE')),
        expires_at timestamptz NOT NULL,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX collection_uploads_draft_idx ON collection_uploads (draft_id, created_at)`);
    await q.query(`
      CREATE TABLE collection_upload_parts (
        upload_id text NOT NULL REFERENCES collection_uploads(id) ON DELETE CASCADE,
        number integer NOT NULL,
        size integer NOT NULL,
        sha256 text NOT NULL,
        received_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (upload_id, number)
      )`);
    await q.query(`
      CREATE TABLE collection_media (
        id text PRIMARY KEY,
        organization_id text NOT NULL REFERENCES organizations(id),
        product_id text NOT NULL REFERENCES products(id),
        upload_id text NOT NULL UNIQUE,
        kind text NOT NULL,
        content_type text NOT NULL,
        size bigint NOT NULL,
        sha256 text NOT NULL,
        storage_key text NOT NULL,
        erased_at timestamptz,
        created_at timestamptz(3) NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE collection_customer_decisions (
        id text PRIMARY KEY,
        proof_item_id text NOT NULL REFERENCES proof_items(id),
        version_id text NOT NULL REFERENCES proof_versions(id),
        decision text NOT NULL CHECK (decision IN ('approved', 'declined')),
        reason text,
        created_at timestamptz(3) NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX collection_customer_decisions_item_idx ON collection_customer_decisions (proof_item_id)`);
    // Who asked not to be asked again: every later ask to the same recipient in the product is refused.
    await q.query(`
      CREATE TABLE collection_suppressions (
        organization_id text NOT NULL REFERENCES organizations(id),
        product_id text NOT NULL REFERENCES products(id),
        recipient_key text NOT NULL,
        via text NOT NULL,
        request_id text,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        PRIMARY KEY (product_id, recipient_key)
      )`);
    // The exact wording a customer agreed to, when they agreed through a collection flow.
    await q.query(`ALTER TABLE consent_grants ADD COLUMN consent_template_version_id text, ADD COLUMN wording_hash text`);
    // What a signed end user told the prompt of one flow: not now (until), a channel preference.
    await q.query(`
      CREATE TABLE collection_prompt_choices (
        product_id text NOT NULL REFERENCES products(id),
        end_user_id text NOT NULL,
        flow_id text NOT NULL,
        not_now_until timestamptz,
        channel_preference text,
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (product_id, end_user_id, flow_id)
      )`);
    // Paused by the customer through the control link: renders stop until they resume.
    await q.query(`ALTER TABLE proof_items ADD COLUMN customer_paused_at timestamptz`);
    await q.query(`CREATE INDEX proof_items_person_idx ON proof_items (product_id, customer_person_id) WHERE customer_person_id IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX proof_items_person_idx`);
    await q.query(`ALTER TABLE proof_items DROP COLUMN customer_paused_at`);
    await q.query(`ALTER TABLE consent_grants DROP COLUMN consent_template_version_id, DROP COLUMN wording_hash`);
    for (const table of [
      'collection_prompt_choices', 'collection_suppressions', 'collection_customer_decisions', 'collection_media', 'collection_upload_parts',
      'collection_uploads', 'collection_secrets', 'collection_drafts',
    ]) {
      await q.query(`DROP TABLE ${table}`);
    }
  }
}
