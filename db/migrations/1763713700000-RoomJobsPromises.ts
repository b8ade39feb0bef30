import { MigrationInterface, QueryRunner } from 'typeorm';

const TABLES = ['room_handoffs', 'room_solve_participants', 'room_solve_sessions', 'room_promises', 'room_jobs'];

export class RoomJobsPromises1763713700000 implements MigrationInterface {
  name = 'RoomJobsPromises1763713700000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE room_jobs (
        id text PRIMARY KEY,
        room_id text NOT NULL REFERENCES rooms(id),
        organization_id text NOT NULL REFERENCES organizations(id),
        product_id text NOT NULL REFERENCES products(id),
        type text NOT NULL CHECK (type IN ('send_release_receipts', 'make_promise', 'complete_promise', 'open_solve_session', 'end_solve_session')),
        params jsonb NOT NULL,
        status text NOT NULL CHECK (status IN ('queued', 'running', 'succeeded', 'failed')),
        result jsonb,
        error jsonb,
        created_by_type text NOT NULL,
        created_by_id text NOT NULL,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        started_at timestamptz(3),
        completed_at timestamptz(3)
      )`);
    await q.query('CREATE INDEX room_jobs_room_idx ON room_jobs (room_id)');

    await q.query(`
      CREATE TABLE room_promises (
        id text PRIMARY KEY,
        room_id text NOT NULL REFERENCES rooms(id),
        organization_id text NOT NULL REFERENCES organizations(id),
        product_id text NOT NULL REFERENCES products(id),
        job_id text NOT NULL REFERENCES room_jobs(id),
        text text NOT NULL,
        due_at timestamptz(3) NOT NULL,
        state text NOT NULL CHECK (state IN ('pending_approval', 'active', 'completed', 'missed', 'rejected')),
        approval_id text NOT NULL,
        approved_at timestamptz(3),
        completed_at timestamptz(3),
        missed_at timestamptz(3),
        created_at timestamptz(3) NOT NULL DEFAULT now()
      )`);
    await q.query('CREATE INDEX room_promises_room_idx ON room_promises (room_id, created_at)');

    await q.query(`
      CREATE TABLE room_solve_sessions (
        id text PRIMARY KEY,
        room_id text NOT NULL REFERENCES rooms(id),
        job_id text NOT NULL REFERENCES room_jobs(id),
        state text NOT NULL CHECK (state IN ('open', 'ended')),
        terms_version text NOT NULL,
        terms_text text NOT NULL,
        terms_sha256 text NOT NULL,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        ended_at timestamptz(3)
      )`);
    await q.query('CREATE INDEX room_solve_sessions_room_idx ON room_solve_sessions (room_id, created_at)');

    await q.query(`
      CREATE TABLE room_solve_participants (
        session_id text NOT NULL REFERENCES room_solve_sessions(id),
        principal_id text NOT NULL,
        consent_id text NOT NULL,
        terms_version text NOT NULL,
        terms_sha256 text NOT NULL,
        accepted_at timestamptz(3) NOT NULL DEFAULT now(),
        PRIMARY KEY (session_id, principal_id)
      )`);

    await q.query(`
      CREATE TABLE room_handoffs (
        id text PRIMARY KEY,
        room_id text NOT NULL REFERENCES rooms(id),
        state text NOT NULL CHECK (state IN ('active', 'ended')),
        requested_by_type text NOT NULL CHECK (requested_by_type IN ('key', 'end_user')),
        requested_by_id text NOT NULL,
        reason text,
        teammate_id text REFERENCES teammates(id),
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        ended_at timestamptz(3),
        ended_by jsonb
      )`);
    // One active handoff per room, whatever races: the second insert fails.
    await q.query(`CREATE UNIQUE INDEX room_handoffs_active_idx ON room_handoffs (room_id) WHERE state = 'active'`);
    await q.query('CREATE INDEX room_handoffs_room_idx ON room_handoffs (room_id, created_at DESC)');

    // A release receipt is an inbox item naming the room; one per room, release and end user.
    await q.query('ALTER TABLE inbox_items ADD COLUMN room_id text REFERENCES rooms(id)');
    await q.query(`CREATE UNIQUE INDEX inbox_items_room_release_idx ON inbox_items (room_id, release_id, end_user_id) WHERE room_id IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX inbox_items_room_release_idx');
    await q.query('ALTER TABLE inbox_items DROP COLUMN room_id');
    for (const table of TABLES) await q.query(`DROP TABLE ${table}`);
  }
}
