import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Client } from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import type { DataSource } from 'typeorm';
import { principalIdOf } from '../db/rules/room-rules';

/** How much one workspace holds. */
export interface SeedSize {
  signals: number;
  endUsers: number;
  features: number;
  stories: number;
  placements: number;
  ledgerEvents: number;
  deliveries: number;
  inboxItems: number;
  rooms: number;
  roomEvents: number;
  sources: number;
}

/**
 * A workspace of `signals` signals with everything else in the issue's proportions (1,000,000 signals: 100,000
 * stories, 2,000 placements, 5,000,000 ledger events, 1,000,000 deliveries). Rooms grow in number, not in length:
 * every room holds 500 events at any size, as a workspace with more customers has more rooms.
 */
export const scaled = (signals: number): SeedSize => ({
  signals,
  endUsers: Math.max(20, Math.round(signals / 20)),
  features: Math.max(10, Math.round(signals / 100)),
  stories: Math.max(100, Math.round(signals / 10)),
  placements: Math.max(2, Math.round(signals / 500)),
  ledgerEvents: signals * 5,
  deliveries: signals,
  inboxItems: Math.max(100, Math.round(signals / 10)),
  rooms: Math.max(2, Math.round(signals / 500)),
  roomEvents: Math.max(1000, signals),
  sources: Math.max(200, Math.round(signals / 5)),
});

export interface SeedTarget {
  organizationId: string;
  productId: string;
  /** Teammates of the workspace; the first owns 40 % of threads, the others share the rest, 2 % are unassigned. */
  teammateIds: string[];
  /** Webhook endpoints; the first gets 70 % of deliveries. */
  endpointIds: string[];
  /** 6 lowercase letters or digits that keep the ids of several seeded workspaces apart. */
  tag: string;
  /** The organization's name once seeded, set in the seed's transaction: a workspace found by it is complete. */
  seededName?: string;
}

/** Heavy end users: every tenth signal, inbox item and room seat is one of these five. */
export const HEAVY_END_USERS = 5;
/** Every room's length: its events are seq 1..ROOM_LENGTH, nine in ten of them messages. */
export const roomLength = (size: SeedSize) => Math.floor(size.roomEvents / size.rooms);
export const MEMBERS_PER_ROOM = 10;
/** Two years, oldest row first: a "since" filter selects the same share of any workspace. */
const SPAN_MS = 2 * 365 * 24 * 3_600_000;

/** An id of the service's shape (`xxx_` and 10 to 40 of [0-9a-z]), so cursors carry it. */
export const seedId = (prefix: string, tag: string, i: number) => `${prefix}_${tag}${String(i).padStart(9, '0')}`;
export const endUserOf = (i: number, endUsers: number) =>
  i % 10 === 0 ? `user-${(i / 10) % HEAVY_END_USERS}` : `user-${HEAVY_END_USERS + ((i * 7919) % (endUsers - HEAVY_END_USERS))}`;
/** Room `r`'s k-th seat: seat 0 owns the room; seat 0 of every other room is a heavy end user. */
export const roomSeat = (r: number, k: number, endUsers: number) =>
  k === 0 && r % 2 === 0 ? `user-${r % HEAVY_END_USERS}` : `user-${HEAVY_END_USERS + ((r * MEMBERS_PER_ROOM + k) % (endUsers - HEAVY_END_USERS))}`;
/** The read marker of seat k: a few dozen entries behind the head, as a member who reads now and then. */
export const readMarkerOf = (length: number, k: number) => Math.max(0, length - 20 - 4 * k);

const SYLLABLES = ['ka', 'lo', 'mi', 'ne', 'ru', 'ta', 'vo', 'zen', 'pri', 'dor', 'bel', 'qu', 'fa', 'sy', 'gri', 'hol', 'jun', 'wex', 'ob',
  'tri', 'ul', 'mar', 'cor', 'vin'];
/** A made-up company name of three syllables (13,824 of them), as varied in its letters as real names are. */
export const companyName = (k: number) => {
  const name = [k % 24, Math.floor(k / 24) % 24, Math.floor(k / 576) % 24].map((n) => SYLLABLES[n]).join('');
  return name[0].toUpperCase() + name.slice(1);
};
/** Customer companies: each is named in about 20 sources at any size (a customer's own few stories and signals). */
export const companyOf = (i: number, sources: number) => companyName((i * 7) % Math.max(1, Math.floor(sources / 20)));
/** Topics: common words, each in a tenth of the texts or more. */
export const TOPICS = ['exports', 'onboarding', 'billing', 'search', 'reporting', 'mobile', 'integrations', 'permissions'];

/** COPY's text format: tab-separated, `\N` for null, backslash escapes. */
function field(v: unknown): string {
  if (v === null || v === undefined) return '\\N';
  if (v instanceof Date) return v.toISOString();
  if (typeof v === 'boolean') return v ? 't' : 'f';
  if (typeof v === 'number') return String(v);
  const text = Array.isArray(v) ? `{${v.map((x) => `"${String(x)}"`).join(',')}}` : typeof v === 'object' ? JSON.stringify(v) : String(v);
  return text.replace(/\\/g, '\\\\').replace(/\t/g, '\\t').replace(/\n/g, '\\n').replace(/\r/g, '\\r');
}

/** Rows as COPY lines, a few hundred a chunk, generated as the server takes them. */
function* lines(rows: Iterable<unknown[]>, counted: { rows: number }): Generator<string> {
  let chunk = '';
  for (const row of rows) {
    chunk += `${row.map(field).join('\t')}\n`;
    if (++counted.rows % 500 === 0) {
      yield chunk;
      chunk = '';
    }
  }
  if (chunk) yield chunk;
}

/** Streams the rows into `table`; answers how many there were. */
async function copy(client: Client, table: string, columns: string[], rows: Iterable<unknown[]>): Promise<number> {
  const counted = { rows: 0 };
  await pipeline(Readable.from(lines(rows, counted)), client.query(copyFrom(`COPY ${table} (${columns.join(', ')}) FROM STDIN`)));
  return counted.rows;
}

function* range(n: number): Generator<number> {
  for (let i = 0; i < n; i++) yield i;
}

function* map<T>(n: number, row: (i: number) => T): Generator<T> {
  for (const i of range(n)) yield row(i);
}

const STORY_STATUS = (i: number) => (['in_review', 'submitted', 'rejected', 'revoked'][i % 50] ?? 'approved');
const VERSION_STATE: Record<string, string> = { in_review: 'pending_review', submitted: 'draft', rejected: 'rejected', revoked: 'approved',
  approved: 'approved' };
const LEDGER_TYPES = [
  ...Array(40).fill('proof.item.submitted'), ...Array(30).fill('proof.version.created'), ...Array(20).fill('proof.approval.start'),
  ...Array(40).fill('proof.item.approved'), ...Array(30).fill('proof.consent.granted'), ...Array(20).fill('proof.placement.item_added'),
  ...Array(16).fill('proof.request.sent'), 'proof.item.rejected', 'proof.item.rejected', 'proof.consent.revoked', 'proof.revocation.completed',
] as string[];

export type SeedLog = (table: string, rows: number, ms: number) => void;

/**
 * Fills one workspace through COPY, each table a stream of generated rows (nothing held in memory), in one
 * transaction: an interrupted seed leaves nothing half-done. Values are skewed as a real workspace's are: most
 * signals bugs, most threads closed and one teammate's, most stories approved, five heavy end users with a tenth
 * of all signals, a few hot stories with much of the ledger, one endpoint with most deliveries. As a superuser the
 * seed skips foreign-key checks and triggers (`session_replication_role = replica`): the rows are consistent by
 * construction, and the triggers only bump render versions, which no read here uses.
 */
export async function seedWorkspace(ds: DataSource, t: SeedTarget, size: SeedSize, log: SeedLog = () => undefined): Promise<void> {
  // A connection of its own: COPY holds it for minutes.
  const client = new Client({ connectionString: (ds.options as { url: string }).url });
  await client.connect();
  try {
    const superuser = (await client.query(`SELECT rolsuper FROM pg_roles WHERE rolname = current_user`)).rows[0]?.rolsuper === true;
    if (superuser) await client.query(`SET session_replication_role = replica`);
    await client.query('BEGIN');
    const { organizationId: org, productId: product, tag } = t;
    const now = Date.now();
    const at = (i: number, n: number) => new Date(now - Math.round((SPAN_MS * (n - i)) / n));
    const id = (prefix: string, i: number) => seedId(prefix, tag, i);
    const timed = async (table: string, columns: string[], rows: Iterable<unknown[]>) => {
      const start = performance.now();
      const n = await copy(client, table, columns, rows);
      log(table, n, performance.now() - start);
    };

    await timed('end_users', ['product_id', 'end_user_id', 'organization_id', 'created_at', 'updated_at'],
      map(size.endUsers, (i) => [product, `user-${i}`, org, at(i, size.endUsers), at(i, size.endUsers)]));

    const ownerOf = (i: number) => {
      if (i % 50 === 2) return null;
      const spread = (i * 31) % 100;
      return spread < 40 || t.teammateIds.length === 1 ? t.teammateIds[0] : t.teammateIds[1 + (spread % (t.teammateIds.length - 1))];
    };
    const threadState = (i: number) => (i % 50 === 0 ? 'open' : i % 50 === 1 ? 'pending' : i % 3 === 0 ? 'resolved' : 'closed');
    await timed('threads', ['id', 'organization_id', 'product_id', 'end_user_id', 'subject', 'state', 'owner_id', 'created_at', 'updated_at'],
      map(size.signals, (i) => [id('thr', i), org, product, endUserOf(i, size.endUsers), `About ${TOPICS[i % TOPICS.length]} (${i})`,
        threadState(i), ownerOf(i), at(i, size.signals), at(i, size.signals)]));

    const category = (i: number) => (i % 100 === 0 ? 'review' : i % 100 < 5 ? 'ux' : i % 100 < 20 ? 'support' : i % 100 < 50 ? 'feature' : 'bug');
    await timed('signals', ['id', 'organization_id', 'product_id', 'thread_id', 'end_user_id', 'category', 'title', 'body',
      'idempotency_key', 'analysis_state', 'created_at', 'updated_at'],
    map(size.signals, (i) => [id('sig', i), org, product, id('thr', i), endUserOf(i, size.endUsers), category(i),
      `${TOPICS[i % TOPICS.length]} ${category(i)} ${i}`, `The ${TOPICS[i % TOPICS.length]} page is slow when a report has many rows (${i})`,
      `seed-${i}`, 'skipped', at(i, size.signals), at(i, size.signals)]));

    const featureState = (i: number) => (i % 20 === 0 ? 'planned' : i % 20 === 1 ? 'building' : i % 20 === 2 ? 'released' : 'discovery');
    await timed('features', ['id', 'organization_id', 'product_id', 'title', 'problem', 'state', 'public_board', 'score', 'vote_count',
      'created_at', 'updated_at'],
    map(size.features, (i) => [id('fea', i), org, product, `Better ${TOPICS[i % TOPICS.length]} ${i}`, `A problem with ${TOPICS[i % TOPICS.length]}`,
      featureState(i), i % 4 === 0, ((i * 7919) % 1000) / 10, (i * 13) % 200, at(i, size.features), at(i, size.features)]));

    const version = (i: number, n: number) => id('pver', i * 2 + n - 1);
    await timed('proof_items', ['id', 'organization_id', 'product_id', 'submission_id', 'type', 'status', 'customer_name',
      'original_version_id', 'approved_public_version_id', 'incentive', 'verification_state', 'revoked_at', 'created_at', 'updated_at'],
    map(size.stories, (i) => {
      const status = STORY_STATUS(i);
      return [id('pit', i), org, product, id('sub', i), 'text', status, `Customer ${i}`, version(i, 1),
        status === 'approved' ? version(i, 1) : null, { offered: false }, 'unverified', status === 'revoked' ? at(i, size.stories) : null,
        at(i, size.stories), at(i, size.stories)];
    }));

    // One original a story; every fourth has a second, draft wording.
    await timed('proof_versions', ['id', 'proof_item_id', 'version_number', 'is_original', 'content', 'content_hash', 'created_by_type',
      'parent_version_id', 'semantic_diff', 'approval_state', 'created_at'],
    (function* () {
      for (const i of range(size.stories)) {
        const text = `${companyOf(i, size.sources)} cut our ${TOPICS[i % TOPICS.length]} time in half (${i})`;
        const hash = `sha256:${createHash('sha256').update(text).digest('hex')}`;
        yield [version(i, 1), id('pit', i), 1, true, { text }, hash, 'customer', null, {}, VERSION_STATE[STORY_STATUS(i)], at(i, size.stories)];
        if (i % 4 === 0) {
          yield [version(i, 2), id('pit', i), 2, false, { text: `${text}.` }, `${hash.slice(0, -1)}0`, 'teammate', version(i, 1),
            { parentVersionId: version(i, 1) }, 'draft', at(i, size.stories)];
        }
      }
    })());

    // An active grant on each approved story, a revoked one on each revoked story; every tenth also has a superseded older grant.
    let grants = 0;
    await timed('consent_grants', ['id', 'proof_item_id', 'approved_version_id', 'state', 'display_mode',
      'identity_fields', 'channels', 'products', 'media', 'paid_use_allowed', 'translation_allowed', 'geography', 'customer_approved_wording',
      'revoked_at', 'created_at'],
    (function* () {
      for (const i of range(size.stories)) {
        const status = STORY_STATUS(i);
        if (status !== 'approved' && status !== 'revoked') continue;
        const grant = (state: string, n: number) => [id('cgr', grants++), id('pit', i), version(i, 1), state, 'name_and_company',
          ['name', 'company'], ['website', 'email'], { all: true }, [], false, false, [], true, state === 'revoked' ? at(i, size.stories) : null,
          new Date(at(i, size.stories).getTime() + n)];
        if (i % 10 === 5) yield grant('superseded', 0);
        yield grant(status === 'revoked' ? 'revoked' : 'active', 1000);
      }
    })());

    await timed('proof_placements', ['id', 'organization_id', 'product_id', 'name', 'placement_type', 'channel', 'host_context',
      'state', 'published_at', 'created_at', 'updated_at'],
    map(size.placements, (p) => [id('plc', p), org, product, `Wall ${p}`, 'wall', 'website', 'service_native', 'active',
      at(p, size.placements), at(p, size.placements), at(p, size.placements)]));
    // Ten approved stories a placement.
    const blocks = Math.max(1, Math.floor(size.stories / 50));
    await timed('proof_placement_items', ['id', 'placement_id', 'proof_item_id', 'version_id', 'position', 'state', 'created_at'],
      map(size.placements * 10, (n) => {
        const p = Math.floor(n / 10);
        const story = (n % blocks) * 50 + 10 + (Math.floor(n / blocks) % 40);
        return [id('ppi', n), id('plc', p), id('pit', story), version(story, 1), n % 10, 'active', at(p, size.placements)];
      }));

    // Ledger: a few hot stories (every twentieth event goes to one of a hundred) and the rest spread.
    const ledgerItem = (i: number) => (i % 20 === 0 ? (i / 20) % Math.min(100, size.stories) : (i * 7919) % size.stories);
    await timed('proof_events', ['id', 'organization_id', 'product_id', 'event_type', 'proof_item_id', 'actor_type',
      'properties', 'created_at'],
    map(size.ledgerEvents, (i) => [id('pev', i), org, product, LEDGER_TYPES[i % LEDGER_TYPES.length], id('pit', ledgerItem(i)), 'system', {},
      at(i, size.ledgerEvents)]));

    const endpointOf = (i: number) => t.endpointIds[i % 10 < 7 || t.endpointIds.length === 1 ? 0 : 1 + (i % (t.endpointIds.length - 1))];
    await timed('webhook_deliveries', ['id', 'organization_id', 'endpoint_id', 'product_id', 'event_id', 'event_type', 'payload',
      'status', 'attempt_count', 'last_error', 'workflow_started', 'created_at', 'completed_at'],
    map(size.deliveries, (i) => {
      const failed = i % 100 === 0;
      return [id('whd', i), org, endpointOf(i), product, id('evt', i), i % 3 === 0 ? 'thread.updated' : 'signal.created', '{}',
        failed ? 'failed' : 'delivered', failed ? 8 : 1, failed ? 'HTTP 500' : null, true, at(i, size.deliveries), at(i, size.deliveries)];
    }));

    const length = roomLength(size);
    const seat = (r: number, k: number) => principalIdOf(product, 'end_user', roomSeat(r, k, size.endUsers));
    const teammateSeat = principalIdOf(product, 'teammate', t.teammateIds[0]);
    await timed('rooms', ['id', 'organization_id', 'product_id', 'title', 'kind', 'status', 'visibility', 'created_by_type',
      'created_by_principal_id', 'head_seq', 'created_at', 'updated_at'],
    map(size.rooms, (r) => [id('room', r), org, product, `Room about ${TOPICS[r % TOPICS.length]} ${r}`, r % 3 === 0 ? 'feature' : 'support',
      r % 5 === 0 ? 'resolved' : 'open', 'private', 'end_user', seat(r, 0), length, at(r, size.rooms), at(r, size.rooms)]));
    await timed('room_members', ['room_id', 'principal_id', 'product_id', 'type', 'end_user_id', 'teammate_id',
      'role', 'visibility', 'state', 'invited_at', 'joined_at', 'read_marker', 'created_at'],
    (function* () {
      for (const r of range(size.rooms)) {
        const when = at(r, size.rooms);
        for (const k of range(MEMBERS_PER_ROOM)) {
          yield [id('room', r), seat(r, k), product, 'end_user', roomSeat(r, k, size.endUsers), null, k === 0 ? 'owner' : 'customer', 'external',
            'joined', when, when, readMarkerOf(length, k), new Date(when.getTime() + k)];
        }
        yield [id('room', r), teammateSeat, product, 'teammate', null, t.teammateIds[0], 'teammate', 'internal', 'joined', when, when, length,
          new Date(when.getTime() + MEMBERS_PER_ROOM)];
      }
    })());
    // Nine entries in ten are customer messages, by the room's members in turn; the tenth an internal run update.
    // All within the last 20 days: the service compacts entries older than its retention (30 days by default),
    // so a live room's log holds only recent ones; older seeded entries would be deleted when the service starts.
    const entryAt = (r: number, s: number) => new Date(now - 20 * 86_400_000 + Math.round((19 * 86_400_000 * r) / size.rooms) + s * 1000);
    const message = (r: number, s: number) => id('rmsg', r * length + s);
    await timed('room_messages', ['id', 'room_id', 'seq', 'author_type', 'author_principal_id', 'kind',
      'body', 'visibility', 'created_at'],
    (function* () {
      for (const r of range(size.rooms)) {
        for (let s = 1; s <= length; s++) {
          if (s % 10 !== 0) yield [message(r, s), id('room', r), s, 'end_user', seat(r, s % MEMBERS_PER_ROOM), 'text',
            `Message ${s} about ${TOPICS[s % TOPICS.length]}`, 'customer', entryAt(r, s)];
        }
      }
    })());
    await timed('room_events', ['room_id', 'seq', 'type', 'visibility', 'audience_principal_id', 'actor_type', 'actor_id',
      'data', 'created_at'],
    (function* () {
      for (const r of range(size.rooms)) {
        for (let s = 1; s <= length; s++) {
          yield s % 10 === 0
            ? [id('room', r), s, 'run.updated', 'internal', teammateSeat, 'system', null, { roomId: id('room', r), seq: s, runId: id('run', r) }, entryAt(r, s)]
            : [id('room', r), s, 'room.message.created', 'customer', null, 'end_user', seat(r, s % MEMBERS_PER_ROOM),
              { roomId: id('room', r), seq: s, messageId: message(r, s) }, entryAt(r, s)];
        }
      }
    })());

    // Inbox: the newest twentieth is unread, everything older was read.
    await timed('inbox_items', ['id', 'organization_id', 'product_id', 'end_user_id', 'subject', 'preview', 'read_at', 'created_at'],
      map(size.inboxItems, (i) => [id('inb', i), org, product, endUserOf(i, size.endUsers), `Update on ${TOPICS[i % TOPICS.length]}`,
        'We shipped something you asked for', i >= size.inboxItems * 0.95 ? null : at(i, size.inboxItems), at(i, size.inboxItems)]));

    // Sources: half from stories (their words), half from signals.
    await timed('proof_sources', ['id', 'organization_id', 'product_id', 'system', 'external_id', 'kind', 'captured_at',
      'captured_text', 'title', 'links', 'provenance', 'reuse', 'proof_item_id', 'created_at'],
    map(size.sources, (i) => {
      const fromStory = i % 2 === 0 && i / 2 < size.stories;
      const story = i / 2;
      // Every topic in both halves: a word only the private half held would be a word the public search never finds.
      const text = `${companyOf(i, size.sources)} says the ${TOPICS[Math.floor(i / 2) % TOPICS.length]} ${i % 3 === 0 ? 'and reporting ' : ''}work saves hours (${i})`;
      return fromStory
        ? [id('src', i), org, product, 'proof_submission', id('sub', story), 'testimonial', at(i, size.sources), text, `Story ${i}`,
          { proofItemId: id('pit', story), versionId: version(story, 1), signalId: null, valueEventId: null, dealId: null, brandMentionId: null },
          '[]', 'allowed_with_consent', id('pit', story), at(i, size.sources)]
        : [id('src', i), org, product, 'signal', id('sig', i), 'signal', at(i, size.sources), text, null,
          { proofItemId: null, versionId: null, signalId: id('sig', i), valueEventId: null, dealId: null, brandMentionId: null },
          '[]', 'internal_only', null, at(i, size.sources)];
    }));
    if (t.seededName) await client.query('UPDATE organizations SET name = $2 WHERE id = $1', [org, t.seededName]);
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    await client.end();
  }
  for (const table of ['end_users', 'threads', 'signals', 'features', 'proof_items', 'proof_versions', 'consent_grants', 'proof_placements',
    'proof_placement_items', 'proof_events', 'webhook_deliveries', 'rooms', 'room_members', 'room_messages', 'room_events', 'inbox_items', 'proof_sources']) {
    // VACUUM too, as autovacuum would have by now: it sets the visibility map and empties the GIN indexes' pending lists.
    await ds.query(`VACUUM ANALYZE ${table}`);
  }
}
