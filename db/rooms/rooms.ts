import { DataSource, EntityManager } from 'typeorm';
import { conflict, forbidden, notFound, validationFailed } from '../../runtime/service-error';
import { Room, RoomAgentRun, RoomEvent, RoomMember, RoomMessage } from '../entities';
import { RoomStatus } from '../entities/room';
import { PageRequest, decodeCursor, encodeCursor, pageOf } from '../pagination';
import { newId } from '../rules/ids';
import { AGENT_ALIASES, needsSnapshot, principalIdOf, roomStatusMoveAllowed } from '../rules/room-rules';
import {
  ActorType, RoomViewer, appendRoomEvent, messageVisibleTo, viewEvents, viewMember, viewMessages, viewOneMessage, viewRoom,
} from './room-log';
import { attachToMessage, lockAttachable } from './attachments';
import { cancelApprovals, cancelRunsWhere, lockPendingApprovals, viewRun } from './agent-runs';
import { handoffOf } from './handoffs';
import { promisesChangedAfter, visiblePromises } from './promises';
import { openSolveSessions } from './solve-sessions';

const MAX_ROOM_MEMBERS = 1000;
const CATCH_UP_MESSAGES = 100;

/** Who calls: an end user (always a customer), a service key or a teammate (both internal). */
export type RoomCaller =
  | { kind: 'end_user'; organizationId: string; productId: string; endUserId: string; principalId: string }
  | { kind: 'key'; organizationId: string; productId: string; keyId: string }
  | { kind: 'teammate'; organizationId: string; teammateId: string };

export function endUserCaller(who: { organizationId: string; productId: string; endUserId: string }): RoomCaller {
  return {
    kind: 'end_user', organizationId: who.organizationId, productId: who.productId, endUserId: who.endUserId,
    principalId: principalIdOf(who.productId, 'end_user', who.endUserId),
  };
}

export function actorOf(caller: RoomCaller): { type: ActorType; id: string } {
  if (caller.kind === 'end_user') return { type: 'end_user', id: caller.principalId };
  if (caller.kind === 'key') return { type: 'key', id: caller.keyId };
  return { type: 'teammate', id: caller.teammateId };
}

const ACTIVE_STATES = ['invited', 'joined'];

async function memberOf(em: EntityManager | DataSource, roomId: string, principalId: string): Promise<RoomMember | null> {
  return em.getRepository(RoomMember).findOneBy({ roomId, principalId });
}

interface RoomAccess {
  room: Room;
  viewer: RoomViewer;
}

/**
 * The room as this caller may reach it: another product's room, and a private room an end user was
 * neither invited to nor joined, are the same 404 as an unknown id. `lock` takes the room row's lock.
 */
export async function reachRoom(em: EntityManager | DataSource, caller: RoomCaller, roomId: string, lock = false): Promise<RoomAccess> {
  const qb = em.getRepository(Room).createQueryBuilder('r').where('r.id = :roomId', { roomId });
  if (caller.kind === 'teammate') qb.andWhere('r.organization_id = :org', { org: caller.organizationId });
  else qb.andWhere('r.product_id = :productId', { productId: caller.productId });
  if (lock) qb.setLock('pessimistic_write');
  const room = await qb.getOne();
  if (!room) throw notFound('room');
  if (caller.kind !== 'end_user') return { room, viewer: { internal: true, principalId: null, member: null } };
  const member = await memberOf(em, room.id, caller.principalId);
  if (room.visibility === 'private' && !(member && ACTIVE_STATES.includes(member.state))) throw notFound('room');
  return { room, viewer: { internal: false, principalId: caller.principalId, member } };
}

/** Routes for "I member": the caller must have joined (a visible room it has not joined is 403). */
export async function reachAsMember(em: EntityManager | DataSource, caller: RoomCaller, roomId: string, lock = false): Promise<RoomAccess> {
  const access = await reachRoom(em, caller, roomId, lock);
  if (caller.kind === 'end_user' && access.viewer.member?.state !== 'joined') throw forbidden('join the room first');
  return access;
}

export function assertWritable(room: Room): void {
  if (room.status === 'archived') throw conflict('the room is archived');
}

async function checkLinks(em: EntityManager, productId: string, endUserId: string, threadIds?: string[], featureIds?: string[]) {
  const issues: Array<{ path: string; message: string }> = [];
  if (threadIds?.length) {
    const rows: Array<{ id: string }> = await em.query(
      'SELECT id FROM threads WHERE product_id = $1 AND end_user_id = $2 AND id = ANY($3)', [productId, endUserId, threadIds]);
    const known = new Set(rows.map((r) => r.id));
    threadIds.forEach((id, i) => {
      if (!known.has(id)) issues.push({ path: `threadIds[${i}]`, message: 'is not one of your threads' });
    });
  }
  if (featureIds?.length) {
    const rows: Array<{ id: string }> = await em.query(
      'SELECT id FROM features WHERE product_id = $1 AND public_board AND id = ANY($2)', [productId, featureIds]);
    const known = new Set(rows.map((r) => r.id));
    featureIds.forEach((id, i) => {
      if (!known.has(id)) issues.push({ path: `featureIds[${i}]`, message: 'is not a feature of the public board' });
    });
  }
  if (issues.length > 0) throw validationFailed(issues);
}

export interface RoomInput {
  title: string;
  kind?: Room['kind'];
  purpose?: string | null;
  visibility?: Room['visibility'];
  threadIds?: string[];
  featureIds?: string[];
}

export type EndUserCaller = Extract<RoomCaller, { kind: 'end_user' }>;

/** A new room: the creator its owner, the two agents added, `room.created` as seq 1. */
export async function createRoom(ds: DataSource, caller: EndUserCaller, input: RoomInput) {
  return ds.transaction(async (em) => {
    await checkLinks(em, caller.productId, caller.endUserId, input.threadIds, input.featureIds);
    const id = newId('room');
    const threadIds = [...new Set(input.threadIds ?? [])];
    const featureIds = [...new Set(input.featureIds ?? [])];
    await em.query(
      `INSERT INTO rooms (id, organization_id, product_id, title, kind, purpose, status, visibility, created_by_type,
         created_by_principal_id, thread_ids, feature_ids)
       VALUES ($1, $2, $3, $4, $5, $6, 'open', $7, 'end_user', $8, $9, $10)`,
      [id, caller.organizationId, caller.productId, input.title, input.kind ?? 'general', input.purpose ?? null,
        input.visibility ?? 'private', caller.principalId, threadIds, featureIds],
    );
    await em.query(
      `INSERT INTO end_users (product_id, end_user_id, organization_id) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
      [caller.productId, caller.endUserId, caller.organizationId]);
    await em.query(
      `INSERT INTO room_members (room_id, principal_id, product_id, type, end_user_id, role, visibility, state, joined_at)
       VALUES ($1, $2, $3, 'end_user', $4, 'owner', 'external', 'joined', now())`,
      [id, caller.principalId, caller.productId, caller.endUserId]);
    for (const alias of AGENT_ALIASES) {
      await em.query(
        `INSERT INTO room_members (room_id, principal_id, product_id, type, alias, role, visibility, state, joined_at)
         VALUES ($1, $2, $3, 'agent', $4, 'agent', 'internal', 'joined', now())`,
        [id, principalIdOf(caller.productId, 'agent', alias), caller.productId, alias]);
    }
    const room = await em.getRepository(Room).findOneByOrFail({ id });
    const seq = await appendRoomEvent(em, room, {
      type: 'room.created', visibility: 'customer', actor: actorOf(caller),
      data: { kind: room.kind, visibility: room.visibility, createdBy: { type: 'end_user', principalId: caller.principalId } },
    });
    await em.query('UPDATE room_members SET read_marker = $3 WHERE room_id = $1 AND principal_id = $2', [id, caller.principalId, seq]);
    return getRoom(em, caller, id);
  });
}

export async function getRoom(em: EntityManager | DataSource, caller: RoomCaller, roomId: string) {
  const { room, viewer } = await reachRoom(em, caller, roomId);
  return viewRoom(room, viewer);
}

/** Rooms the end user was invited to or joined, newest first. */
export async function listRooms(ds: DataSource, caller: EndUserCaller, filter: { status?: RoomStatus }, page: PageRequest) {
  const qb = ds.getRepository(Room).createQueryBuilder('room')
    .where('room.product_id = :productId', { productId: caller.productId })
    .andWhere(`EXISTS (SELECT 1 FROM room_members m WHERE m.room_id = room.id AND m.principal_id = :p AND m.state IN ('invited', 'joined'))`, { p: caller.principalId });
  if (filter.status) qb.andWhere('room.status = :status', { status: filter.status });
  const members = new Map<string, RoomMember>();
  const result = await pageOf(qb, 'room', page, (room) => room);
  const rows = result.data.length === 0 ? [] : await ds.getRepository(RoomMember).createQueryBuilder('m')
    .where('m.principal_id = :p AND m.room_id IN (:...ids)', { p: caller.principalId, ids: result.data.map((r) => r.id) }).getMany();
  for (const m of rows) members.set(m.roomId, m);
  return {
    data: result.data.map((room) => viewRoom(room, { internal: false, principalId: caller.principalId, member: members.get(room.id) ?? null })),
    nextCursor: result.nextCursor,
  };
}

/** Case-insensitive substring search of title, purpose and the messages this caller may see. */
export async function searchRooms(ds: DataSource, caller: RoomCaller & { productId: string }, q: string, filter: { status?: RoomStatus }, page: PageRequest) {
  const pattern = `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  const customer = caller.kind === 'end_user';
  const qb = ds.getRepository(Room).createQueryBuilder('room').where('room.product_id = :productId', { productId: caller.productId });
  if (customer) {
    qb.andWhere(`(room.visibility = 'product' OR EXISTS (SELECT 1 FROM room_members m WHERE m.room_id = room.id
      AND m.principal_id = :p AND m.state IN ('invited', 'joined')))`, { p: caller.principalId });
  }
  if (filter.status) qb.andWhere('room.status = :status', { status: filter.status });
  // The messages this caller may see that match; `p` and `who` name the pattern and the caller's principal.
  const matching = (p: string, who: string) => `m.deleted_at IS NULL AND m.body ILIKE ${p}
    ${customer ? `AND m.visibility = 'customer' AND (NOT m.hidden OR m.author_principal_id = ${who})` : ''}`;
  qb.andWhere(`(room.title ILIKE :pattern OR room.purpose ILIKE :pattern
    OR EXISTS (SELECT 1 FROM room_messages m WHERE m.room_id = room.id AND ${matching(':pattern', ':p')}))`, { pattern });
  const result = await pageOf(qb, 'room', page, (room) => room);
  if (result.data.length === 0) return { data: [], nextCursor: result.nextCursor };
  const roomIds = result.data.map((r) => r.id);
  // The page's newest five matches per room and the caller's member records, one query each.
  const matched: Array<{ room_id: string; id: string }> = await ds.query(
    `SELECT room_id, id FROM (
       SELECT m.room_id, m.id, m.seq, row_number() OVER (PARTITION BY m.room_id ORDER BY m.seq DESC) AS n
         FROM room_messages m WHERE m.room_id = ANY($2) AND ${matching('$1', '$3')}) hits
      WHERE n <= 5 ORDER BY seq DESC`,
    customer ? [pattern, roomIds, caller.principalId] : [pattern, roomIds],
  );
  const members = !customer ? [] : await ds.getRepository(RoomMember).createQueryBuilder('m')
    .where('m.principal_id = :p AND m.room_id IN (:...ids)', { p: caller.principalId, ids: roomIds }).getMany();
  const memberOfRoom = new Map(members.map((m) => [m.roomId, m]));
  const data = result.data.map((room) => ({
    room: viewRoom(room, customer ? { internal: false, principalId: caller.principalId, member: memberOfRoom.get(room.id) ?? null } : null),
    matchedMessageIds: matched.filter((m) => m.room_id === room.id).map((m) => m.id),
  }));
  return { data, nextCursor: result.nextCursor };
}

export interface RoomPatch extends Partial<RoomInput> {
  status?: RoomStatus;
  readMarker?: number;
}

/** The owner changes the room; any member moves its own read marker (forward only). */
export async function patchRoom(ds: DataSource, caller: EndUserCaller, roomId: string, patch: RoomPatch) {
  return ds.transaction(async (em) => {
    const { readMarker, status, ...fields } = patch;
    const ownerChange = status !== undefined || Object.keys(fields).length > 0;
    if (status === 'archived') {
      // The lock orders of a decision (approval, then room) and of a cancel (run, approval, then room).
      const peek = await reachRoom(em, caller, roomId);
      if (peek.viewer.member?.role === 'owner' && peek.room.status !== 'archived') {
        const held = await lockPendingApprovals(em, roomId);
        await cancelRunsWhere(em, { roomId }, actorOf(caller));
        await cancelApprovals(em, held, actorOf(caller));
      }
    }
    const { room, viewer } = await reachRoom(em, caller, roomId, true);
    const member = viewer.member;
    if (member?.state !== 'joined') throw forbidden('join the room first');
    if (ownerChange && member.role !== 'owner') throw forbidden('only the room\'s owner may change it');
    if (readMarker !== undefined) {
      if (readMarker > room.headSeq) throw validationFailed([{ path: 'readMarker', message: `must be at most headSeq (${room.headSeq})` }]);
      if (readMarker < member.readMarker) throw conflict(`the read marker only moves forward (it is at ${member.readMarker})`);
      await em.query('UPDATE room_members SET read_marker = $3 WHERE room_id = $1 AND principal_id = $2', [roomId, member.principalId, readMarker]);
    }
    if (ownerChange) {
      if (room.status === 'archived' && !(status === 'archived' && Object.keys(fields).length === 0)) throw conflict('the room is archived');
      await checkLinks(em, caller.productId, caller.endUserId, fields.threadIds, fields.featureIds);
      const changed: string[] = [];
      const columns: Record<string, unknown> = {};
      const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
      const current: Record<string, unknown> = {
        title: room.title, kind: room.kind, purpose: room.purpose, visibility: room.visibility, threadIds: room.threadIds, featureIds: room.featureIds,
      };
      for (const [key, value] of Object.entries(fields)) {
        const next = key === 'threadIds' || key === 'featureIds' ? [...new Set(value as string[])] : value;
        if (!same(current[key], next)) {
          changed.push(key);
          columns[key] = next;
        }
      }
      if (status !== undefined && status !== room.status) {
        if (!roomStatusMoveAllowed(room.status, status)) throw conflict(`the room cannot move from ${room.status} to ${status}`);
        await em.query('UPDATE rooms SET status = $2 WHERE id = $1', [roomId, status]);
        await appendRoomEvent(em, room, {
          type: 'room.status_changed', visibility: 'customer', actor: actorOf(caller), data: { from: room.status, to: status },
        });
      }
      if (changed.length > 0) {
        await em.getRepository(Room).update({ id: roomId }, columns);
        await appendRoomEvent(em, room, { type: 'room.updated', visibility: 'customer', actor: actorOf(caller), data: { changed } });
      }
    }
    return getRoom(em, caller, roomId);
  });
}

/** An end user joins: invited, left or new in a product room; a private room only when invited. */
export async function joinRoom(ds: DataSource, caller: EndUserCaller, roomId: string) {
  return ds.transaction(async (em) => {
    const { room, viewer } = await reachRoom(em, caller, roomId, true);
    const member = viewer.member;
    if (member?.state === 'joined') return viewMember(member, viewer);
    assertWritable(room);
    if (member?.state === 'removed') throw forbidden('you were removed from this room');
    if (room.visibility === 'private' && member?.state !== 'invited') throw notFound('room');
    await assertRoomHasSpace(em, roomId, member ? 0 : 1);
    await em.query(
      `INSERT INTO end_users (product_id, end_user_id, organization_id) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
      [caller.productId, caller.endUserId, caller.organizationId]);
    await em.query(
      `INSERT INTO room_members (room_id, principal_id, product_id, type, end_user_id, role, visibility, state, joined_at)
       VALUES ($1, $2, $3, 'end_user', $4, 'customer', 'external', 'joined', now())
       ON CONFLICT (room_id, principal_id) DO UPDATE SET state = 'joined', joined_at = now()`,
      [roomId, caller.principalId, caller.productId, caller.endUserId]);
    const seq = await appendRoomEvent(em, room, {
      type: 'member.joined', visibility: 'customer', actor: actorOf(caller), data: { principalId: caller.principalId },
    });
    await em.query('UPDATE room_members SET read_marker = $3 WHERE room_id = $1 AND principal_id = $2', [roomId, caller.principalId, seq]);
    const joined = await em.getRepository(RoomMember).findOneByOrFail({ roomId, principalId: caller.principalId });
    return viewMember(joined, { ...viewer, member: joined });
  });
}

export async function leaveRoom(ds: DataSource, caller: EndUserCaller, roomId: string) {
  return ds.transaction(async (em) => {
    const { room, viewer } = await reachRoom(em, caller, roomId, true);
    const member = viewer.member;
    if (!member || !ACTIVE_STATES.includes(member.state)) throw forbidden('you are not a member of this room');
    if (member.role === 'owner') throw conflict('the owner cannot leave the room');
    await em.query(`UPDATE room_members SET state = 'left' WHERE room_id = $1 AND principal_id = $2`, [roomId, member.principalId]);
    await appendRoomEvent(em, room, {
      type: 'member.left', visibility: 'customer', actor: actorOf(caller), data: { principalId: member.principalId },
    });
    const left = await em.getRepository(RoomMember).findOneByOrFail({ roomId, principalId: member.principalId });
    return viewMember(left, viewer);
  });
}

async function assertRoomHasSpace(em: EntityManager, roomId: string, adding: number): Promise<void> {
  const [{ n }]: Array<{ n: number }> = await em.query(
    `SELECT count(*)::int AS n FROM room_members WHERE room_id = $1 AND state IN ('invited', 'joined')`, [roomId]);
  if (n + adding > MAX_ROOM_MEMBERS) throw conflict(`a room has at most ${MAX_ROOM_MEMBERS} members`);
}

export async function listMembers(ds: DataSource, caller: RoomCaller, roomId: string, states: string[] | undefined, page: PageRequest) {
  const { viewer } = await reachAsMember(ds, caller, roomId);
  const qb = ds.getRepository(RoomMember).createQueryBuilder('m')
    .where('m.room_id = :roomId AND m.state IN (:...states)', { roomId, states: states?.length ? states : ACTIVE_STATES });
  if (page.cursor) {
    const after = decodeCursor(page.cursor);
    qb.andWhere('(m.created_at, m.principal_id) > (:t, :id)', { t: after.createdAt, id: after.id });
  }
  const rows = await qb.orderBy('m.created_at', 'ASC').addOrderBy('m.principal_id', 'ASC').take(page.limit + 1).getMany();
  const more = rows.length > page.limit;
  const data = more ? rows.slice(0, page.limit) : rows;
  const last = data[data.length - 1];
  return {
    data: data.map((m) => viewMember(m, viewer)),
    nextCursor: more ? encodeCursor({ createdAt: last.createdAt, id: last.principalId }) : null,
  };
}

type KeyCaller = Extract<RoomCaller, { kind: 'key' }>;

/** A key invites end users (created when unknown); left or removed ones are invited again. */
export async function inviteMembers(ds: DataSource, caller: KeyCaller, roomId: string, endUserIds: string[]) {
  return ds.transaction(async (em) => {
    const { room } = await reachRoom(em, caller, roomId, true);
    assertWritable(room);
    const wanted = [...new Set(endUserIds)];
    const existing = await em.getRepository(RoomMember).createQueryBuilder('m')
      .where('m.room_id = :roomId AND m.type = :t AND m.end_user_id IN (:...ids)', { roomId, t: 'end_user', ids: wanted }).getMany();
    const byUser = new Map(existing.map((m) => [m.endUserId!, m]));
    const already = wanted.filter((id) => ACTIVE_STATES.includes(byUser.get(id)?.state ?? '')).map((id) => byUser.get(id)!.principalId);
    const fresh = wanted.filter((id) => !ACTIVE_STATES.includes(byUser.get(id)?.state ?? ''));
    await assertRoomHasSpace(em, roomId, fresh.length);
    const principalIds = fresh.map((endUserId) => principalIdOf(room.productId, 'end_user', endUserId));
    if (principalIds.length > 0) {
      await em.query(
        `INSERT INTO end_users (product_id, end_user_id, organization_id)
         SELECT $1, u.id, $3 FROM unnest($2::text[]) AS u(id) ON CONFLICT DO NOTHING`,
        [room.productId, fresh, room.organizationId]);
      await em.query(
        `INSERT INTO room_members (room_id, principal_id, product_id, type, end_user_id, role, visibility, state)
         SELECT $1, u.principal_id, $3, 'end_user', u.end_user_id, 'customer', 'external', 'invited'
           FROM unnest($2::text[], $4::text[]) AS u(principal_id, end_user_id)
         ON CONFLICT (room_id, principal_id) DO UPDATE SET state = 'invited', invited_at = now(), joined_at = NULL`,
        [roomId, principalIds, room.productId, fresh]);
      await appendRoomEvent(em, room, {
        type: 'room.cohort.invited', visibility: 'customer', actor: actorOf(caller), data: { principalIds, count: principalIds.length },
      });
    }
    const invited = principalIds.length === 0 ? [] : await em.getRepository(RoomMember).createQueryBuilder('m')
      .where('m.room_id = :roomId AND m.principal_id IN (:...ids)', { roomId, ids: principalIds }).getMany();
    return { invited: invited.map((m) => viewMember(m, null)), alreadyMembers: already };
  });
}

/** A key removes a member; the runs it started are cancelled as a cancel would. */
export async function removeMember(ds: DataSource, caller: KeyCaller, roomId: string, principalId: string) {
  return ds.transaction(async (em) => {
    await reachRoom(em, caller, roomId);
    await cancelRunsWhere(em, { roomId, starterPrincipalId: principalId }, actorOf(caller));
    const { room } = await reachRoom(em, caller, roomId, true);
    const member = await memberOf(em, roomId, principalId);
    if (!member) throw notFound('member');
    if (member.role === 'owner' || member.type === 'agent') throw conflict('the owner and the agents cannot be removed');
    if (member.state !== 'removed') {
      assertWritable(room);
      await em.query(`UPDATE room_members SET state = 'removed' WHERE room_id = $1 AND principal_id = $2`, [roomId, principalId]);
      await appendRoomEvent(em, room, { type: 'member.removed', visibility: 'customer', actor: actorOf(caller), data: { principalId } });
    }
    return viewMember(await em.getRepository(RoomMember).findOneByOrFail({ roomId, principalId }), null);
  });
}

export async function ensureTeammateMember(em: EntityManager, room: Room, teammateId: string): Promise<string> {
  const principalId = principalIdOf(room.productId, 'teammate', teammateId);
  await em.query(
    `INSERT INTO room_members (room_id, principal_id, product_id, type, teammate_id, role, visibility, state, joined_at)
     VALUES ($1, $2, $3, 'teammate', $4, 'teammate', 'internal', 'joined', now())
     ON CONFLICT (room_id, principal_id) DO UPDATE SET state = 'joined'`,
    [room.id, principalId, room.productId, teammateId]);
  return principalId;
}

interface NewMessage {
  body: string;
  kind: 'text' | 'decision' | 'poll';
  visibility: 'customer' | 'internal';
  /** The options of a `poll` (its body is the question). */
  poll?: { options: string[] };
}

/** Writes a message and its `room.message.created` entry (and `room.decision.recorded` for a decision). */
export async function insertMessage(
  em: EntityManager, room: Room, author: { type: RoomMessage['authorType']; principalId: string }, actor: { type: ActorType; id: string | null }, input: NewMessage,
): Promise<string> {
  const id = newId('msg');
  const seq = await appendRoomEvent(em, room, {
    type: 'room.message.created', visibility: input.visibility, actor,
    data: { messageId: id, kind: input.kind, visibility: input.visibility, authorType: author.type },
  });
  await em.query(
    `INSERT INTO room_messages (id, room_id, seq, author_type, author_principal_id, kind, body, visibility)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [id, room.id, seq, author.type, author.principalId, input.kind, input.body, input.visibility]);
  if (input.kind === 'poll' && input.poll) {
    await em.query('INSERT INTO room_polls (id, room_id, message_id, options) VALUES ($1, $2, $3, $4)', [newId('poll'), room.id, id, input.poll.options]);
  }
  if (input.kind === 'decision') {
    await appendRoomEvent(em, room, { type: 'room.decision.recorded', visibility: input.visibility, actor, data: { messageId: id } });
  }
  return id;
}

/** A message by an end user (text or poll, with its own unattached uploads) or a teammate (text or decision). */
export async function postMessage(ds: DataSource, caller: RoomCaller, roomId: string, input: NewMessage & { attachmentIds?: string[] }) {
  return ds.transaction(async (em) => {
    const { room, viewer } = caller.kind === 'end_user' ? await reachAsMember(em, caller, roomId, true) : await reachRoom(em, caller, roomId, true);
    assertWritable(room);
    let principalId: string;
    if (caller.kind === 'end_user') principalId = caller.principalId;
    else if (caller.kind === 'teammate') principalId = await ensureTeammateMember(em, room, caller.teammateId);
    else throw new Error('keys do not post messages');
    const attachmentIds = await lockAttachable(em, room.id, principalId, input.attachmentIds ?? []);
    const id = await insertMessage(em, room, { type: caller.kind, principalId }, actorOf(caller), input);
    await attachToMessage(em, id, attachmentIds);
    return viewOneMessage(em, id, viewer);
  });
}

/** A message of this room the reader may see (an internal one is 404 to a customer, like an unknown id). */
export async function visibleMessage(em: EntityManager | DataSource, viewer: RoomViewer, roomId: string, messageId: string): Promise<RoomMessage> {
  const message = await em.getRepository(RoomMessage).findOneBy({ id: messageId, roomId });
  if (!message || !messageVisibleTo(viewer, message)) throw notFound('message');
  return message;
}

async function ownMessage(em: EntityManager, caller: EndUserCaller, roomId: string, messageId: string) {
  const access = await reachAsMember(em, caller, roomId, true);
  const message = await visibleMessage(em, access.viewer, roomId, messageId);
  if (message.authorPrincipalId !== caller.principalId) throw forbidden('only its author may change a message');
  return { ...access, message };
}

export async function editMessage(ds: DataSource, caller: EndUserCaller, roomId: string, messageId: string, body: string) {
  return ds.transaction(async (em) => {
    const { room, viewer, message } = await ownMessage(em, caller, roomId, messageId);
    assertWritable(room);
    if (message.deletedAt) throw conflict('the message was deleted');
    await em.query('UPDATE room_messages SET body = $2, edited_at = now() WHERE id = $1', [messageId, body]);
    await appendRoomEvent(em, room, { type: 'message.edited', visibility: message.visibility, actor: actorOf(caller), data: { messageId } });
    return viewOneMessage(em, messageId, viewer);
  });
}

export async function deleteMessage(ds: DataSource, caller: EndUserCaller, roomId: string, messageId: string) {
  return ds.transaction(async (em) => {
    const { room, viewer, message } = await ownMessage(em, caller, roomId, messageId);
    if (!message.deletedAt) {
      assertWritable(room);
      await em.query('UPDATE room_messages SET deleted_at = now() WHERE id = $1', [messageId]);
      await appendRoomEvent(em, room, { type: 'message.deleted', visibility: message.visibility, actor: actorOf(caller), data: { messageId } });
    }
    return viewOneMessage(em, messageId, viewer);
  });
}

/** The last `limit` messages this reader may see, oldest first. */
async function recentMessages(em: EntityManager | DataSource, roomId: string, viewer: RoomViewer, limit: number) {
  const qb = em.getRepository(RoomMessage).createQueryBuilder('m').where('m.room_id = :roomId', { roomId });
  if (!viewer.internal) qb.andWhere(`m.visibility = 'customer'`);
  const rows = await qb.orderBy('m.seq', 'DESC').take(limit).getMany();
  return viewMessages(em, rows.reverse(), viewer);
}

interface EventsSettings {
  snapshotThreshold: number;
  snapshotMessages: number;
}

/**
 * GET /events (ROOMS.md §5): the visible entries after `after`, or a snapshot of the whole current state
 * when the reader is too far behind (Matrix /sync's `limited` timeline).
 */
export async function roomEvents(ds: DataSource, caller: RoomCaller, roomId: string, query: { after?: number; limit: number }, settings: EventsSettings) {
  return ds.transaction('REPEATABLE READ', async (em) => {
    const { room, viewer } = await reachAsMember(em, caller, roomId);
    const { after, limit } = query;
    if (after !== undefined && after > room.headSeq) {
      throw validationFailed([{ path: 'after', message: `must be at most headSeq (${room.headSeq})` }]);
    }
    if (needsSnapshot(after, room.headSeq, settings.snapshotThreshold, room.compactedThrough)) {
      const members = await em.getRepository(RoomMember).createQueryBuilder('m')
        .where('m.room_id = :roomId AND m.state IN (:...states)', { roomId, states: ACTIVE_STATES })
        .orderBy('m.created_at', 'ASC').addOrderBy('m.principal_id', 'ASC').getMany();
      return {
        limited: true,
        events: [],
        snapshot: {
          room: viewRoom(room, viewer),
          members: members.map((m) => viewMember(m, viewer)),
          messages: await recentMessages(em, roomId, viewer, settings.snapshotMessages),
          canvas: { version: room.canvasVersion },
          handoff: await handoffOf(em, roomId),
          promises: await visiblePromises(em, roomId),
          solveSessions: await openSolveSessions(em, roomId),
        },
        seq: room.headSeq,
        headSeq: room.headSeq,
        hasMore: false,
      };
    }
    const qb = em.getRepository(RoomEvent).createQueryBuilder('e').where('e.room_id = :roomId AND e.seq > :after', { roomId, after });
    if (!viewer.internal) {
      qb.andWhere(`(e.visibility = 'customer' OR e.audience_principal_id = :p)`, { p: viewer.principalId });
    }
    const rows = await qb.orderBy('e.seq', 'ASC').take(limit).getMany();
    // A full page stops the scan at its last entry; a short one scanned through the head.
    const seq = rows.length === limit ? rows[rows.length - 1].seq : room.headSeq;
    return {
      limited: false,
      events: await viewEvents(em, rows, viewer),
      snapshot: null,
      seq,
      headSeq: room.headSeq,
      hasMore: seq < room.headSeq,
    };
  });
}

/** GET /catch-up: what arrived since the caller's read marker; only PATCH readMarker and join move it. */
export async function catchUp(ds: DataSource, caller: EndUserCaller, roomId: string) {
  return ds.transaction('REPEATABLE READ', async (em) => {
    const { room, viewer } = await reachAsMember(em, caller, roomId);
    const marker = viewer.member!.readMarker;
    const unread = () => em.getRepository(RoomMessage).createQueryBuilder('m')
      .where(`m.room_id = :roomId AND m.seq > :marker AND m.visibility = 'customer' AND m.deleted_at IS NULL`, { roomId, marker })
      .andWhere('m.author_principal_id <> :p', { p: caller.principalId });
    const unreadCount = await unread().getCount();
    const newest = await unread().orderBy('m.seq', 'DESC').take(CATCH_UP_MESSAGES).getMany();
    const runRows: Array<{ run_id: string }> = await em.query(
      `SELECT DISTINCT data->>'runId' AS run_id FROM room_events
        WHERE room_id = $1 AND seq > $2 AND type = 'run.updated' AND audience_principal_id = $3`,
      [roomId, marker, caller.principalId]);
    const runs = runRows.length === 0 ? [] : await em.getRepository(RoomAgentRun).createQueryBuilder('r')
      .where('r.id IN (:...ids)', { ids: runRows.map((r) => r.run_id) }).orderBy('r.created_at', 'ASC').getMany();
    return {
      readMarker: marker,
      seq: room.headSeq,
      unreadCount,
      messages: await viewMessages(em, newest.reverse(), viewer),
      limited: unreadCount > CATCH_UP_MESSAGES,
      promises: await promisesChangedAfter(em, roomId, marker),
      runs: runs.map(viewRun),
    };
  });
}
