import { MigrationInterface, QueryRunner } from 'typeorm';

export class ProofPlacements1763712400000 implements MigrationInterface {
  name = 'ProofPlacements1763712400000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE proof_placements (
        id text PRIMARY KEY,
        organization_id text NOT NULL REFERENCES organizations(id),
        product_id text NOT NULL REFERENCES products(id),
        name text NOT NULL,
        placement_type text NOT NULL CHECK (placement_type IN ('wall', 'widget', 'slot', 'case_study', 'campaign', 'sales_asset')),
        channel text NOT NULL,
        host_context text NOT NULL,
        locale text,
        geography text,
        state text NOT NULL CHECK (state IN ('draft', 'active', 'paused', 'archived')),
        render_cache_version integer NOT NULL DEFAULT 1,
        render_config jsonb NOT NULL DEFAULT '{}',
        eligibility_policy jsonb NOT NULL DEFAULT '{}',
        published_at timestamptz,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX proof_placements_product_created_idx ON proof_placements (product_id, created_at DESC, id DESC)`);
    await q.query(`
      CREATE TABLE proof_placement_items (
        id text PRIMARY KEY,
        placement_id text NOT NULL REFERENCES proof_placements(id),
        proof_item_id text NOT NULL REFERENCES proof_items(id),
        version_id text REFERENCES proof_versions(id),
        position integer NOT NULL,
        state text NOT NULL CHECK (state IN ('active', 'removed')),
        removed_reason text,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        removed_at timestamptz
      )`);
    // One live row per item and placement; removed rows stay as history.
    await q.query(`CREATE UNIQUE INDEX proof_placement_items_live_idx ON proof_placement_items (placement_id, proof_item_id) WHERE state = 'active'`);
    await q.query(`CREATE INDEX proof_placement_items_order_idx ON proof_placement_items (placement_id, position, created_at, id) WHERE state = 'active'`);
    await q.query(`
      CREATE TABLE proof_assets (
        id text PRIMARY KEY,
        organization_id text NOT NULL REFERENCES organizations(id),
        product_id text NOT NULL REFERENCES products(id),
        asset_type text NOT NULL CHECK (asset_type IN ('quote_card', 'case_study')),
        source_proof_ids text[] NOT NULL,
        source_version_ids text[] NOT NULL,
        template_id text,
        brand_kit_version text,
        approval_state text NOT NULL CHECK (approval_state IN ('draft', 'approved', 'rejected')),
        channel_eligibility text[] NOT NULL,
        files text[] NOT NULL,
        content jsonb NOT NULL,
        media_type text NOT NULL,
        body bytea NOT NULL,
        created_at timestamptz(3) NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX proof_assets_versions_idx ON proof_assets USING gin (source_version_ids)`);
    await q.query(`
      CREATE TABLE proof_engagement_counts (
        placement_id text NOT NULL REFERENCES proof_placements(id),
        proof_item_id text NOT NULL REFERENCES proof_items(id),
        event_type text NOT NULL,
        day date NOT NULL,
        count bigint NOT NULL,
        PRIMARY KEY (placement_id, proof_item_id, event_type, day)
      )`);
    // The service's Ed25519 keys. Old keys stay (state retired) so earlier signatures still verify.
    await q.query(`
      CREATE TABLE proof_signing_keys (
        id text PRIMARY KEY,
        state text NOT NULL CHECK (state IN ('active', 'retired')),
        public_jwk jsonb NOT NULL,
        private_key_pem text NOT NULL,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        retired_at timestamptz
      )`);
    await q.query(`CREATE UNIQUE INDEX proof_signing_keys_one_active_idx ON proof_signing_keys ((true)) WHERE state = 'active'`);
    await q.query(`
      CREATE TABLE proof_receipts (
        id text PRIMARY KEY,
        consent_grant_id text NOT NULL UNIQUE REFERENCES consent_grants(id),
        proof_item_id text NOT NULL REFERENCES proof_items(id),
        key_id text NOT NULL REFERENCES proof_signing_keys(id),
        payload jsonb NOT NULL,
        signature text NOT NULL,
        created_at timestamptz(3) NOT NULL DEFAULT now()
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of ['proof_receipts', 'proof_signing_keys', 'proof_engagement_counts', 'proof_assets', 'proof_placement_items', 'proof_placements']) {
      await q.query(`DROP TABLE ${table}`);
    }
  }
}
