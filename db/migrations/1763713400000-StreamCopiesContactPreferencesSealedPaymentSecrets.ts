import { MigrationInterface, QueryRunner } from 'typeorm';
import { isSealed, openSecret, sealSecret } from '../../runtime/secret-box';

/** Payment signing secrets were stored as given; sealed now like every other secret the service reuses. */
export async function sealPlaintextSigningSecrets(q: QueryRunner): Promise<void> {
  const rows: Array<{ id: string; signing_secret: string }> = await q.query(
    `SELECT id, signing_secret FROM proof_stripe_connections WHERE signing_secret IS NOT NULL`);
  for (const row of rows.filter((r) => !isSealed(r.signing_secret))) {
    await q.query(`UPDATE proof_stripe_connections SET signing_secret = $2 WHERE id = $1`, [row.id, sealSecret(row.signing_secret)]);
  }
}

export class IntegrationsFinish1763713400000 implements MigrationInterface {
  name = 'IntegrationsFinish1763713400000';

  async up(q: QueryRunner): Promise<void> {
    await sealPlaintextSigningSecrets(q);
    // Ask suppression reads collection's own records (suppressions, sent requests) instead of a copy;
    // an opt-out kept in the copy moves over as a suppression of that person.
    await q.query(`
      INSERT INTO collection_suppressions (organization_id, product_id, recipient_key, via)
      SELECT p.organization_id, c.product_id, 'person:' || c.person_key, 'opt_out'
        FROM proof_contact_preferences c JOIN products p ON p.id = c.product_id
       WHERE c.opted_out_at IS NOT NULL
      ON CONFLICT DO NOTHING`);
    await q.query(`DROP TABLE proof_contact_preferences`);
    await q.query(`CREATE INDEX proof_requests_person_ref_sent_idx ON proof_requests (product_id, (recipient->>'personRef'), sent_at) WHERE sent_at IS NOT NULL`);
    await q.query(`CREATE INDEX proof_requests_end_user_sent_idx ON proof_requests (product_id, (recipient->>'endUserId'), sent_at) WHERE sent_at IS NOT NULL`);
    // One copy per media asset at the video host: its uid once the host accepted it, and its state.
    await q.query(`
      CREATE TABLE proof_stream_copies (
        media_id text PRIMARY KEY REFERENCES collection_media(id),
        organization_id text NOT NULL REFERENCES organizations(id),
        product_id text NOT NULL REFERENCES products(id),
        version_id text NOT NULL REFERENCES proof_versions(id),
        uid text UNIQUE,
        state text NOT NULL CHECK (state IN ('copying', 'playable', 'failed')),
        error_reason text,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE proof_stream_copies`);
    await q.query(`DROP INDEX proof_requests_end_user_sent_idx`);
    await q.query(`DROP INDEX proof_requests_person_ref_sent_idx`);
    await q.query(`
      CREATE TABLE proof_contact_preferences (
        product_id text NOT NULL REFERENCES products(id),
        person_key text NOT NULL,
        opted_out_at timestamptz,
        last_request_sent_at timestamptz,
        PRIMARY KEY (product_id, person_key)
      )`);
    const rows: Array<{ id: string; signing_secret: string }> = await q.query(
      `SELECT id, signing_secret FROM proof_stripe_connections WHERE signing_secret IS NOT NULL`);
    for (const row of rows) {
      await q.query(`UPDATE proof_stripe_connections SET signing_secret = $2 WHERE id = $1`, [row.id, openSecret(row.signing_secret)]);
    }
  }
}
