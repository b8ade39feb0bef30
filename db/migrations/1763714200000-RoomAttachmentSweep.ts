import { MigrationInterface, QueryRunner } from 'typeorm';

export class RoomAttachmentSweep1763714200000 implements MigrationInterface {
  name = 'RoomAttachmentSweep1763714200000';

  async up(q: QueryRunner): Promise<void> {
    // The attachment sweep's second read (expired uploads, whose bytes go next) touches only those few
    // rows; without this index each maintenance round scanned every attachment ever kept.
    await q.query('CREATE INDEX room_attachments_expired_idx ON room_attachments (expired_at) WHERE expired_at IS NOT NULL');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX room_attachments_expired_idx');
  }
}
