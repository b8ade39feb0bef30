import { MigrationInterface, QueryRunner } from 'typeorm';

export class ProofCore1763712300000 implements MigrationInterface {
  name = 'ProofCore1763712300000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE proof_items (
        id text PRIMARY KEY,
        organization_id text NOT NULL REFERENCES organizations(id),
        product_id text NOT NULL REFERENCES products(id),
        submission_id text NOT NULL UNIQUE,
        type text NOT NULL CHECK (type IN ('text', 'audio', 'video', 'image', 'review', 'case_study', 'release_story')),
        status text NOT NULL CHECK (status IN ('submitted', 'in_review', 'approved', 'rejected', 'revoked', 'deleted')),
        status_reason text,
        status_before_delete text,
        customer_person_id text,
        customer_email text,
        customer_name text,
        original_version_id text,
        approved_public_version_id text,
        over_limit boolean NOT NULL DEFAULT false,
        over_limit_reasons text[] NOT NULL DEFAULT '{}',
        incentive jsonb NOT NULL,
        verification_state text NOT NULL,
        render_hold boolean NOT NULL DEFAULT false,
        revoked_at timestamptz,
        deleted_at timestamptz,
        recovery_closes_at timestamptz,
        recovery_closed_at timestamptz,
        created_by_key_id text,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX proof_items_product_created_idx ON proof_items (product_id, created_at DESC, id DESC)`);
    await q.query(`
      CREATE TABLE proof_versions (
        id text PRIMARY KEY,
        proof_item_id text NOT NULL REFERENCES proof_items(id),
        version_number integer NOT NULL,
        is_original boolean NOT NULL,
        content jsonb NOT NULL,
        content_hash text NOT NULL,
        created_by_type text NOT NULL,
        created_by_id text,
        model_id text,
        change_reason text,
        parent_version_id text REFERENCES proof_versions(id),
        locale text,
        semantic_diff jsonb NOT NULL,
        approval_state text NOT NULL CHECK (approval_state IN ('draft', 'pending_review', 'approved', 'rejected')),
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        UNIQUE (proof_item_id, version_number)
      )`);
    await q.query(`CREATE UNIQUE INDEX proof_versions_one_original_idx ON proof_versions (proof_item_id) WHERE is_original`);
    // Versions are immutable in the database: only their approval state may move, and the one other
    // change is erasure, once the item's recovery window has closed (content emptied, hash kept).
    await q.query(`
      CREATE FUNCTION proof_versions_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'DELETE' THEN
          RAISE EXCEPTION 'proof versions are immutable: DELETE refused' USING ERRCODE = 'integrity_constraint_violation';
        END IF;
        IF NEW.content = '{}'::jsonb AND NEW.semantic_diff = '{}'::jsonb
           AND EXISTS (SELECT 1 FROM proof_items WHERE id = OLD.proof_item_id AND recovery_closed_at IS NOT NULL) THEN
          NEW.content_hash := OLD.content_hash;
          NEW.approval_state := OLD.approval_state;
          RETURN NEW;
        END IF;
        IF (NEW.id, NEW.proof_item_id, NEW.version_number, NEW.is_original, NEW.content, NEW.content_hash,
            NEW.created_by_type, NEW.created_by_id, NEW.model_id, NEW.change_reason, NEW.parent_version_id,
            NEW.locale, NEW.semantic_diff, NEW.created_at)
           IS DISTINCT FROM
           (OLD.id, OLD.proof_item_id, OLD.version_number, OLD.is_original, OLD.content, OLD.content_hash,
            OLD.created_by_type, OLD.created_by_id, OLD.model_id, OLD.change_reason, OLD.parent_version_id,
            OLD.locale, OLD.semantic_diff, OLD.created_at) THEN
          RAISE EXCEPTION 'proof versions are immutable: only approval_state may change' USING ERRCODE = 'integrity_constraint_violation';
        END IF;
        RETURN NEW;
      END $$`);
    await q.query(`
      CREATE TRIGGER proof_versions_immutable BEFORE UPDATE OR DELETE ON proof_versions
        FOR EACH ROW EXECUTE FUNCTION proof_versions_immutable()`);
    await q.query(`
      CREATE TABLE consent_grants (
        id text PRIMARY KEY,
        proof_item_id text NOT NULL REFERENCES proof_items(id),
        approved_version_id text NOT NULL REFERENCES proof_versions(id),
        state text NOT NULL CHECK (state IN ('active', 'superseded', 'revoked')),
        display_mode text NOT NULL,
        identity_fields text[] NOT NULL,
        channels text[] NOT NULL,
        products jsonb NOT NULL,
        media text[] NOT NULL,
        paid_use_allowed boolean NOT NULL,
        translation_allowed boolean NOT NULL,
        geography text[] NOT NULL,
        valid_until timestamptz,
        customer_approved_wording boolean NOT NULL,
        receipt_hash text,
        evidence jsonb,
        revoked_at timestamptz,
        created_at timestamptz(3) NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX consent_grants_item_idx ON consent_grants (proof_item_id, created_at DESC, id DESC)`);
    await q.query(`
      CREATE TABLE proof_approval_requests (
        id text PRIMARY KEY,
        organization_id text NOT NULL REFERENCES organizations(id),
        proof_item_id text NOT NULL REFERENCES proof_items(id),
        version_id text NOT NULL REFERENCES proof_versions(id),
        state text NOT NULL CHECK (state IN ('pending', 'approved', 'rejected', 'superseded', 'cancelled')),
        requested_by_type text NOT NULL,
        requested_by_id text,
        decided_by text,
        decided_at timestamptz,
        reason text,
        reminders_sent integer NOT NULL DEFAULT 0,
        last_reminded_at timestamptz,
        created_at timestamptz(3) NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX proof_approval_requests_one_pending_idx ON proof_approval_requests (proof_item_id) WHERE state = 'pending'`);
    await q.query(`CREATE INDEX proof_approval_requests_queue_idx ON proof_approval_requests (organization_id, created_at, id) WHERE state = 'pending'`);
    await q.query(`
      CREATE TABLE proof_revocations (
        id text PRIMARY KEY,
        organization_id text NOT NULL REFERENCES organizations(id),
        proof_item_id text NOT NULL REFERENCES proof_items(id),
        consent_grant_id text REFERENCES consent_grants(id),
        request_text text,
        resolution_state text NOT NULL CHECK (resolution_state IN ('pending', 'escalated', 'completed')),
        immediate_policy_action text NOT NULL,
        sla_deadline_at timestamptz NOT NULL,
        requested_by_type text NOT NULL,
        requested_by_id text,
        escalated_at timestamptz,
        completed_by text,
        completed_at timestamptz,
        created_at timestamptz(3) NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX proof_revocations_one_open_idx ON proof_revocations (proof_item_id) WHERE resolution_state <> 'completed'`);
    // Every render reads all of an item's revocations, completed ones included.
    await q.query(`CREATE INDEX proof_revocations_item_idx ON proof_revocations (proof_item_id)`);
    await q.query(`
      CREATE TABLE proof_events (
        id text PRIMARY KEY,
        organization_id text NOT NULL REFERENCES organizations(id),
        product_id text REFERENCES products(id),
        event_type text NOT NULL,
        proof_item_id text,
        placement_id text,
        asset_id text,
        actor_type text NOT NULL,
        actor_id text,
        properties jsonb NOT NULL,
        created_at timestamptz(3) NOT NULL DEFAULT clock_timestamp()
      )`);
    await q.query(`CREATE INDEX proof_events_product_created_idx ON proof_events (product_id, created_at, id)`);
    await q.query(`CREATE INDEX proof_events_item_idx ON proof_events (proof_item_id, created_at, id)`);
    // The ledger is append-only for every role that can reach the table, not only for this code.
    await q.query(`
      CREATE FUNCTION proof_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'proof_events is append-only: % refused', TG_OP USING ERRCODE = 'integrity_constraint_violation';
      END $$`);
    await q.query(`
      CREATE TRIGGER proof_events_append_only BEFORE UPDATE OR DELETE ON proof_events
        FOR EACH ROW EXECUTE FUNCTION proof_events_append_only()`);
    await q.query(`
      CREATE TRIGGER proof_events_no_truncate BEFORE TRUNCATE ON proof_events
        FOR EACH STATEMENT EXECUTE FUNCTION proof_events_append_only()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE proof_events`);
    await q.query(`DROP FUNCTION proof_events_append_only()`);
    for (const table of ['proof_revocations', 'proof_approval_requests', 'consent_grants', 'proof_versions', 'proof_items']) {
      await q.query(`DROP TABLE ${table}`);
    }
    await q.query(`DROP FUNCTION proof_versions_immutable()`);
  }
}
