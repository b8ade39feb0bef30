import { MigrationInterface, QueryRunner } from 'typeorm';

const TABLES = [
  'room_knowledge', 'room_documents', 'room_canvas_versions', 'room_approvals', 'room_agent_runs', 'room_events', 'room_messages', 'room_members', 'rooms',
];

export class Rooms1763713500000 implements MigrationInterface {
  name = 'Rooms1763713500000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE rooms (
        id text PRIMARY KEY,
        organization_id text NOT NULL REFERENCES organizations(id),
        product_id text NOT NULL REFERENCES products(id),
        title text NOT NULL,
        kind text NOT NULL CHECK (kind IN ('general', 'feature', 'support', 'release')),
        purpose text,
        status text NOT NULL CHECK (status IN ('open', 'waiting', 'resolved', 'archived')),
        visibility text NOT NULL CHECK (visibility IN ('private', 'product')),
        created_by_type text NOT NULL,
        created_by_principal_id text NOT NULL,
        thread_ids text[] NOT NULL DEFAULT '{}',
        feature_ids text[] NOT NULL DEFAULT '{}',
        -- The last event's seq; raised under this row's lock, so seq is gap-free and ordered per room.
        head_seq bigint NOT NULL DEFAULT 0,
        canvas_version integer NOT NULL DEFAULT 0,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        updated_at timestamptz(3) NOT NULL DEFAULT now()
      )`);
    await q.query('CREATE INDEX rooms_product_idx ON rooms (product_id, created_at DESC, id DESC)');

    await q.query(`
      CREATE TABLE room_members (
        room_id text NOT NULL REFERENCES rooms(id),
        principal_id text NOT NULL,
        product_id text NOT NULL REFERENCES products(id),
        type text NOT NULL CHECK (type IN ('end_user', 'teammate', 'agent')),
        end_user_id text,
        teammate_id text,
        alias text,
        role text NOT NULL CHECK (role IN ('owner', 'customer', 'teammate', 'agent')),
        visibility text NOT NULL CHECK (visibility IN ('external', 'internal')),
        state text NOT NULL CHECK (state IN ('invited', 'joined', 'left', 'removed')),
        invited_at timestamptz(3) NOT NULL DEFAULT now(),
        joined_at timestamptz(3),
        read_marker bigint NOT NULL DEFAULT 0,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        PRIMARY KEY (room_id, principal_id)
      )`);
    await q.query('CREATE INDEX room_members_end_user_idx ON room_members (product_id, end_user_id)');

    await q.query(`
      CREATE TABLE room_messages (
        id text PRIMARY KEY,
        room_id text NOT NULL REFERENCES rooms(id),
        seq bigint NOT NULL,
        author_type text NOT NULL,
        author_principal_id text NOT NULL,
        kind text NOT NULL CHECK (kind IN ('text', 'poll', 'decision')),
        body text NOT NULL,
        visibility text NOT NULL CHECK (visibility IN ('customer', 'internal')),
        hidden boolean NOT NULL DEFAULT false,
        edited_at timestamptz(3),
        deleted_at timestamptz(3),
        created_at timestamptz(3) NOT NULL DEFAULT now()
      )`);
    await q.query('CREATE INDEX room_messages_room_idx ON room_messages (room_id, seq DESC)');

    await q.query(`
      CREATE TABLE room_events (
        room_id text NOT NULL REFERENCES rooms(id),
        seq bigint NOT NULL,
        type text NOT NULL,
        visibility text NOT NULL CHECK (visibility IN ('customer', 'internal')),
        -- An internal event its subject (the run's starter, a reporter, an appellant) may still read.
        audience_principal_id text,
        actor_type text NOT NULL,
        actor_id text,
        data jsonb NOT NULL,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        PRIMARY KEY (room_id, seq)
      )`);

    await q.query(`
      CREATE TABLE room_agent_runs (
        id text PRIMARY KEY,
        room_id text NOT NULL REFERENCES rooms(id),
        organization_id text NOT NULL REFERENCES organizations(id),
        product_id text NOT NULL REFERENCES products(id),
        alias text NOT NULL,
        status text NOT NULL CHECK (status IN ('queued', 'running', 'awaiting_approval', 'succeeded', 'failed', 'cancelled')),
        visibility text NOT NULL CHECK (visibility IN ('customer', 'internal')),
        input text NOT NULL,
        started_by_type text NOT NULL CHECK (started_by_type IN ('end_user', 'key')),
        started_by_id text NOT NULL,
        starter_principal_id text,
        steps jsonb NOT NULL DEFAULT '[]',
        -- The model's answer, kept until the side effect executes it.
        output text,
        base_canvas_version integer,
        side_effect jsonb,
        last_error jsonb,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        updated_at timestamptz(3) NOT NULL DEFAULT now(),
        started_at timestamptz(3),
        completed_at timestamptz(3),
        cancelled_at timestamptz(3),
        failed_at timestamptz(3)
      )`);
    await q.query('CREATE INDEX room_agent_runs_room_idx ON room_agent_runs (room_id, created_at DESC, id DESC)');

    await q.query(`
      CREATE TABLE room_approvals (
        id text PRIMARY KEY,
        room_id text NOT NULL REFERENCES rooms(id),
        organization_id text NOT NULL REFERENCES organizations(id),
        product_id text NOT NULL REFERENCES products(id),
        kind text NOT NULL CHECK (kind IN ('agent_action', 'promise', 'knowledge', 'appeal')),
        status text NOT NULL CHECK (status IN ('pending', 'approved', 'rejected', 'cancelled', 'expired')),
        subject_id text NOT NULL,
        action jsonb NOT NULL,
        requested_by jsonb NOT NULL,
        requester_principal_id text,
        decided_by_teammate_id text,
        decided_at timestamptz(3),
        note text,
        expires_at timestamptz(3),
        created_at timestamptz(3) NOT NULL DEFAULT now()
      )`);
    await q.query('CREATE INDEX room_approvals_product_idx ON room_approvals (product_id, created_at DESC, id DESC)');
    await q.query('CREATE INDEX room_approvals_subject_idx ON room_approvals (subject_id)');

    await q.query(`
      CREATE TABLE room_canvas_versions (
        room_id text NOT NULL REFERENCES rooms(id),
        version integer NOT NULL,
        content text NOT NULL,
        updated_by_type text NOT NULL,
        updated_by_id text,
        updated_at timestamptz(3) NOT NULL DEFAULT now(),
        PRIMARY KEY (room_id, version)
      )`);

    await q.query(`
      CREATE TABLE room_documents (
        id text PRIMARY KEY,
        room_id text NOT NULL REFERENCES rooms(id),
        organization_id text NOT NULL REFERENCES organizations(id),
        product_id text NOT NULL REFERENCES products(id),
        title text NOT NULL,
        max_statements integer NOT NULL,
        status text NOT NULL CHECK (status IN ('compiling', 'compiled', 'discarded', 'failed')),
        -- What the model was shown, with ids, so its citations are checked against exactly this.
        evidence jsonb NOT NULL,
        statements jsonb NOT NULL DEFAULT '[]',
        rejected jsonb NOT NULL DEFAULT '[]',
        removed_citations jsonb NOT NULL DEFAULT '[]',
        model jsonb,
        created_at timestamptz(3) NOT NULL DEFAULT now()
      )`);
    await q.query('CREATE INDEX room_documents_room_idx ON room_documents (room_id)');

    await q.query(`
      CREATE TABLE room_knowledge (
        id text PRIMARY KEY,
        room_id text NOT NULL REFERENCES rooms(id),
        title text NOT NULL,
        body text NOT NULL,
        document_id text REFERENCES room_documents(id),
        source_ids text[] NOT NULL DEFAULT '{}',
        state text NOT NULL CHECK (state IN ('pending_approval', 'published', 'rejected')),
        approval_id text NOT NULL,
        published_at timestamptz(3),
        created_at timestamptz(3) NOT NULL DEFAULT now()
      )`);
    await q.query('CREATE INDEX room_knowledge_room_idx ON room_knowledge (room_id)');
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of TABLES) await q.query(`DROP TABLE ${table}`);
  }
}
