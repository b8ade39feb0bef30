import { MigrationInterface, QueryRunner } from 'typeorm';

export class ConsoleSignIn1764203000000 implements MigrationInterface {
  name = 'ConsoleSignIn1764203000000';

  async up(q: QueryRunner): Promise<void> {
    // A console sign-in link (PAGES.md §5): single use, 15 minutes. The row is written when the link is asked
    // for; the mail activity mints the secret (only its SHA-256 digest is kept), so no secret is in a workflow's history.
    await q.query(`
      CREATE TABLE teammate_sign_in_links (
        id text PRIMARY KEY,
        teammate_id text NOT NULL REFERENCES teammates(id) ON DELETE CASCADE,
        token_digest text UNIQUE,
        expires_at timestamptz NOT NULL,
        used_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query('CREATE INDEX teammate_sign_in_links_expires_idx ON teammate_sign_in_links (expires_at)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE teammate_sign_in_links');
  }
}
