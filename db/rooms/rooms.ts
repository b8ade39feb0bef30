import { DataSource, EntityManager } from 'typeorm';
import { conflict, forbidden, validationFailed } from '../../runtime/service-error';
import { Room, RoomMember } from '../entities';
import { RoomStatus } from '../entities/room';
import { PageRequest, pageOf } from '../pagination';
import { newId } from '../rules/ids';
import { AGENT_ALIASES, principalIdOf, roomStatusMoveAllowed } from '../rules/room-rules';
import { appendRoomEvent, viewRoom } from './room-log';
import { cancelApprovals, lockPendingApprovals } from './approvals';
import { cancelRunsWhere } from './agent-runs';
import { EndUserCaller, RoomCaller, actorOf, reachRoom } from './room-access';

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
    .andWhere(`EXISTS (SELECT 1 FROM room_members m WHERE m.room_id = room.id AND m.principal_id = :p AND m.state IN ('invited', 'joined'))`,
      { p: caller.principalId });
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
