import { MigrationInterface, QueryRunner } from 'typeorm';

export class DomainClaims1764144000000 implements MigrationInterface {
  name = 'DomainClaims1764144000000';

  async up(q: QueryRunner): Promise<void> {
    // A hostname is held only by a verified claim: pending and failed claims of several flows (and
    // workspaces) may coexist, the first whose records verify wins. A flow claims a hostname once.
    await q.query('ALTER TABLE collection_domains DROP CONSTRAINT collection_domains_hostname_key');
    await q.query(`CREATE UNIQUE INDEX collection_domains_verified_hostname ON collection_domains (hostname) WHERE status = 'verified'`);
    await q.query('CREATE UNIQUE INDEX collection_domains_flow_hostname ON collection_domains (flow_id, hostname)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX collection_domains_flow_hostname');
    await q.query('DROP INDEX collection_domains_verified_hostname');
    // Claims that lost (or never verified) give way to the one verified claim, else the oldest.
    await q.query(`
      DELETE FROM collection_domains WHERE id IN (
        SELECT id FROM (SELECT id, row_number() OVER (PARTITION BY hostname ORDER BY status = 'verified' DESC, created_at, id) AS n
                          FROM collection_domains) ranked
         WHERE n > 1)`);
    await q.query('ALTER TABLE collection_domains ADD CONSTRAINT collection_domains_hostname_key UNIQUE (hostname)');
  }
}
