import { DataSource, EntityManager } from 'typeorm';
import { conflict, forbidden, notFound } from '../../runtime/service-error';
import { RoomMember } from '../entities';
import { PageRequest, decodeCursor, encodeCursor } from '../pagination';
import { principalIdOf } from '../rules/room-rules';
import { appendRoomEvent, viewMember } from './room-log';
import { cancelRunsWhere } from './agent-runs';
import { ACTIVE_STATES, EndUserCaller, KeyCaller, RoomCaller, actorOf, assertWritable, memberOf, reachAsMember, reachRoom } from './room-access';

const MAX_ROOM_MEMBERS = 1000;

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
