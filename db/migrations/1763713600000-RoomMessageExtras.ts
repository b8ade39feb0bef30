import { MigrationInterface, QueryRunner } from 'typeorm';

const TABLES = [
  'room_appeals', 'room_moderation_reports', 'room_moderation_cases', 'room_poll_responses', 'room_polls', 'room_attachments', 'room_reactions',
];

/**
 * Reactions, attachments, polls and moderation of room messages (docs/rooms.md#room-states, docs/rooms.md#paths,
 * docs/rooms.md#reactions-attachments-polls-and-moderation).
 */
export class RoomMessageExtras1763713600000 implements MigrationInterface {
  name = 'RoomMessageExtras1763713600000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE room_reactions (
        message_id text NOT NULL REFERENCES room_messages(id),
        principal_id text NOT NULL,
        emoji text NOT NULL,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        PRIMARY KEY (message_id, emoji, principal_id)
      )`);

    await q.query(`
      CREATE TABLE room_attachments (
        id text PRIMARY KEY,
        room_id text NOT NULL REFERENCES rooms(id),
        product_id text NOT NULL REFERENCES products(id),
        uploader_principal_id text NOT NULL,
        filename text,
        content_type text NOT NULL,
        size integer NOT NULL CHECK (size > 0),
        sha256 text NOT NULL,
        storage_key text NOT NULL,
        message_id text REFERENCES room_messages(id),
        -- Set by the sweep of unattached uploads before their bytes are erased; such a row is gone to everyone.
        expired_at timestamptz(3),
        created_at timestamptz(3) NOT NULL DEFAULT now()
      )`);
    await q.query('CREATE INDEX room_attachments_message_idx ON room_attachments (message_id)');
    await q.query('CREATE INDEX room_attachments_unattached_idx ON room_attachments (created_at) WHERE message_id IS NULL');

    await q.query(`
      CREATE TABLE room_polls (
        id text PRIMARY KEY,
        room_id text NOT NULL REFERENCES rooms(id),
        message_id text NOT NULL UNIQUE REFERENCES room_messages(id),
        options text[] NOT NULL,
        created_at timestamptz(3) NOT NULL DEFAULT now()
      )`);

    await q.query(`
      CREATE TABLE room_poll_responses (
        poll_id text NOT NULL REFERENCES room_polls(id),
        principal_id text NOT NULL,
        option_index integer NOT NULL,
        updated_at timestamptz(3) NOT NULL DEFAULT now(),
        PRIMARY KEY (poll_id, principal_id)
      )`);

    await q.query(`
      CREATE TABLE room_moderation_cases (
        id text PRIMARY KEY,
        room_id text NOT NULL REFERENCES rooms(id),
        message_id text NOT NULL UNIQUE REFERENCES room_messages(id),
        reason text NOT NULL CHECK (reason IN ('spam', 'abuse', 'harassment', 'privacy', 'other')),
        state text NOT NULL CHECK (state IN ('open', 'actioned', 'appealed', 'reversed', 'upheld')),
        report_count integer NOT NULL DEFAULT 0,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        updated_at timestamptz(3) NOT NULL DEFAULT now()
      )`);

    await q.query(`
      CREATE TABLE room_moderation_reports (
        case_id text NOT NULL REFERENCES room_moderation_cases(id),
        reporter_principal_id text NOT NULL,
        reason text NOT NULL CHECK (reason IN ('spam', 'abuse', 'harassment', 'privacy', 'other')),
        note text,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        PRIMARY KEY (case_id, reporter_principal_id)
      )`);

    await q.query(`
      CREATE TABLE room_appeals (
        id text PRIMARY KEY,
        room_id text NOT NULL REFERENCES rooms(id),
        case_id text NOT NULL UNIQUE REFERENCES room_moderation_cases(id),
        appellant_principal_id text NOT NULL,
        statement text NOT NULL,
        approval_id text NOT NULL REFERENCES room_approvals(id),
        created_at timestamptz(3) NOT NULL DEFAULT now()
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of TABLES) await q.query(`DROP TABLE ${table}`);
  }
}
