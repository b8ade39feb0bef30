import { MigrationInterface, QueryRunner } from 'typeorm';

export class InboxStreamLeases1764133000000 implements MigrationInterface {
  name = 'InboxStreamLeases1764133000000';

  async up(q: QueryRunner): Promise<void> {
    // One row per open inbox stream, so a cap per end user holds across API processes
    // (db/customer-loop/inbox-streams.ts); rows of a process that died lapse at expires_at.
    await q.query(`
      CREATE TABLE inbox_stream_leases (
        id uuid PRIMARY KEY,
        product_id text NOT NULL,
        end_user_id text NOT NULL,
        expires_at timestamptz NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query('CREATE INDEX inbox_stream_leases_end_user_idx ON inbox_stream_leases (product_id, end_user_id)');
    await q.query('CREATE INDEX inbox_stream_leases_expires_idx ON inbox_stream_leases (expires_at)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE inbox_stream_leases');
  }
}
