import { DataSource, EntityManager } from 'typeorm';
import { conflict, forbidden, notFound, validationFailed } from '../../runtime/service-error';
import { RoomHandoff } from '../entities';
import { newId } from '../rules/ids';
import { appendRoomEvent } from './room-log';
import type { RoomCaller } from './room-access';
import { actorOf, assertWritable, ensureTeammateMember, reachAsMember, reachRoom } from './room-access';
import { databaseNow } from '../clock';

type ProductCaller = RoomCaller & { productId: string };

function viewHandoff(h: RoomHandoff) {
  return {
    id: h.id,
    roomId: h.roomId,
    state: h.state,
    requestedBy: { type: h.requestedByType, id: h.requestedById },
    reason: h.reason,
    teammateId: h.teammateId,
    createdAt: h.createdAt.toISOString(),
    endedAt: h.endedAt ? h.endedAt.toISOString() : null,
    endedBy: h.endedBy,
  };
}

/** The active handoff, or else the latest one (null when the room never had one). */
async function currentHandoff(em: EntityManager | DataSource, roomId: string): Promise<RoomHandoff | null> {
  return em.getRepository(RoomHandoff).createQueryBuilder('h').where('h.room_id = :roomId', { roomId })
    .orderBy(`h.state = 'active'`, 'DESC').addOrderBy('h.created_at', 'DESC').addOrderBy('h.id', 'DESC').getOne();
}

/** The handoff a reader is shown (GET handoff, the snapshot): active or latest, else null. */
export async function handoffOf(em: EntityManager | DataSource, roomId: string) {
  const handoff = await currentHandoff(em, roomId);
  return handoff ? viewHandoff(handoff) : null;
}

export async function hasActiveHandoff(em: EntityManager, roomId: string): Promise<boolean> {
  return em.getRepository(RoomHandoff).existsBy({ roomId, state: 'active' });
}

const reach = (em: EntityManager | DataSource, caller: ProductCaller, roomId: string, lock = false) =>
  (caller.kind === 'end_user' ? reachAsMember(em, caller, roomId, lock) : reachRoom(em, caller, roomId, lock));

export async function getHandoff(ds: DataSource, caller: ProductCaller, roomId: string) {
  await reach(ds, caller, roomId);
  return handoffOf(ds, roomId);
}

const requesterOf = (caller: ProductCaller) => (caller.kind === 'end_user'
  ? { type: 'end_user' as const, id: caller.principalId }
  : { type: 'key' as const, id: (caller as Extract<RoomCaller, { kind: 'key' }>).keyId });

/** Hands the room to a person: one active handoff at a time; a named teammate becomes a member. */
export async function requestHandoff(ds: DataSource, caller: ProductCaller, roomId: string, input: { reason: string | null; teammateId: string | null }) {
  return ds.transaction(async (em) => {
    const { room } = await reach(em, caller, roomId, true);
    if (input.teammateId !== null) {
      const known = await em.query('SELECT 1 FROM teammates WHERE id = $1 AND organization_id = $2', [input.teammateId, room.organizationId]);
      if (known.length === 0) throw validationFailed([{ path: 'teammateId', message: 'is not a teammate of this workspace' }]);
    }
    assertWritable(room);
    if (await hasActiveHandoff(em, roomId)) throw conflict('a handoff is already active');
    const id = newId('hof');
    const requester = requesterOf(caller);
    await em.query(
      `INSERT INTO room_handoffs (id, room_id, state, requested_by_type, requested_by_id, reason, teammate_id)
       VALUES ($1, $2, 'active', $3, $4, $5, $6)`,
      [id, roomId, requester.type, requester.id, input.reason, input.teammateId]);
    if (input.teammateId !== null) await ensureTeammateMember(em, room, input.teammateId);
    const actor = actorOf(caller);
    await appendRoomEvent(em, room, { type: 'handoff.requested', visibility: 'customer', actor, data: { handoffId: id } });
    await appendRoomEvent(em, room, { type: 'room.updated', visibility: 'customer', actor, data: { changed: ['handoff'] } });
    return viewHandoff(await em.getRepository(RoomHandoff).findOneByOrFail({ id }));
  });
}

/** Ends the active handoff: a key, or the end user who asked for it. */
export async function endHandoff(ds: DataSource, caller: ProductCaller, roomId: string) {
  return ds.transaction(async (em) => {
    const { room } = await reach(em, caller, roomId, true);
    const handoff = await em.getRepository(RoomHandoff).findOneBy({ roomId, state: 'active' });
    if (!handoff) throw notFound('active handoff');
    const requester = requesterOf(caller);
    if (caller.kind === 'end_user' && (handoff.requestedByType !== 'end_user' || handoff.requestedById !== requester.id)) {
      throw forbidden('only a key or the end user who asked for the handoff may end it');
    }
    assertWritable(room);
    Object.assign(handoff, { state: 'ended', endedAt: await databaseNow(em), endedBy: requester });
    await em.getRepository(RoomHandoff).save(handoff);
    const actor = actorOf(caller);
    await appendRoomEvent(em, room, { type: 'handoff.ended', visibility: 'customer', actor, data: { handoffId: handoff.id } });
    await appendRoomEvent(em, room, { type: 'room.updated', visibility: 'customer', actor, data: { changed: ['handoff'] } });
    return viewHandoff(handoff);
  });
}
