import { MigrationInterface, QueryRunner } from 'typeorm';

export class RoomOperations1763713800000 implements MigrationInterface {
  name = 'RoomOperations1763713800000';

  async up(q: QueryRunner): Promise<void> {
    // The highest seq removed by compaction (docs/rooms.md#the-event-log-snapshot-and-catch-up): a reader behind it gets a snapshot.
    await q.query('ALTER TABLE rooms ADD COLUMN compacted_through bigint NOT NULL DEFAULT 0');
    // Compaction looks for events older than the retention across every room.
    await q.query('CREATE INDEX room_events_created_idx ON room_events (created_at)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX room_events_created_idx');
    await q.query('ALTER TABLE rooms DROP COLUMN compacted_through');
  }
}
