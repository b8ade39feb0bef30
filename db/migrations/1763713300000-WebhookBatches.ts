import { MigrationInterface, QueryRunner } from 'typeorm';

export class WebhookBatches1763713300000 implements MigrationInterface {
  name = 'WebhookBatches1763713300000';

  async up(q: QueryRunner): Promise<void> {
    // The batch workflow that took a delivery's first attempt: a second batch holding the same delivery
    // (a relay sweep after a lost claim) sends nothing, and only the owner hands failures to retries.
    await q.query(`ALTER TABLE webhook_deliveries ADD COLUMN first_attempt_batch text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhook_deliveries DROP COLUMN first_attempt_batch`);
  }
}
