import { MigrationInterface, QueryRunner } from 'typeorm';

export class PublicLimits1763713200000 implements MigrationInterface {
  name = 'PublicLimits1763713200000';

  async up(q: QueryRunner): Promise<void> {
    // A beacon counts once per event token, type and UTC day: replaying a token adds nothing.
    await q.query(`
      CREATE TABLE proof_engagement_beacons (
        token_digest text NOT NULL,
        event_type text NOT NULL,
        day date NOT NULL,
        PRIMARY KEY (token_digest, event_type, day)
      )`);
    await q.query(`CREATE INDEX proof_engagement_beacons_day_idx ON proof_engagement_beacons (day)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE proof_engagement_beacons`);
  }
}
