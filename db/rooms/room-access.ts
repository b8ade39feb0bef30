import { DataSource, EntityManager } from 'typeorm';
import { conflict, forbidden, notFound } from '../../runtime/service-error';
import { Room, RoomMember, RoomMessage } from '../entities';
import { newId } from '../rules/ids';
import { principalIdOf } from '../rules/room-rules';
import { ActorType, RoomViewer, appendRoomEvent, messageVisibleTo } from './room-log';

// The access kernel every Rooms module builds on: who calls, what it may reach, and writing a message.

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

export type EndUserCaller = Extract<RoomCaller, { kind: 'end_user' }>;
export type KeyCaller = Extract<RoomCaller, { kind: 'key' }>;

export const ACTIVE_STATES = ['invited', 'joined'];

export async function memberOf(em: EntityManager | DataSource, roomId: string, principalId: string): Promise<RoomMember | null> {
  return em.getRepository(RoomMember).findOneBy({ roomId, principalId });
}

export interface RoomAccess {
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

export async function ensureTeammateMember(em: EntityManager, room: Room, teammateId: string): Promise<string> {
  const principalId = principalIdOf(room.productId, 'teammate', teammateId);
  await em.query(
    `INSERT INTO room_members (room_id, principal_id, product_id, type, teammate_id, role, visibility, state, joined_at)
     VALUES ($1, $2, $3, 'teammate', $4, 'teammate', 'internal', 'joined', now())
     ON CONFLICT (room_id, principal_id) DO UPDATE SET state = 'joined'`,
    [room.id, principalId, room.productId, teammateId]);
  return principalId;
}

export interface NewMessage {
  body: string;
  kind: 'text' | 'decision' | 'poll';
  visibility: 'customer' | 'internal';
  /** The options of a `poll` (its body is the question). */
  poll?: { options: string[] };
}

/** Writes a message and its `room.message.created` entry (and `room.decision.recorded` for a decision). */
export async function insertMessage(
  em: EntityManager, room: Room, author: { type: RoomMessage['authorType']; principalId: string }, actor: { type: ActorType; id: string | null },
  input: NewMessage,
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

/** A message of this room the reader may see (an internal one is 404 to a customer, like an unknown id). */
export async function visibleMessage(em: EntityManager | DataSource, viewer: RoomViewer, roomId: string, messageId: string): Promise<RoomMessage> {
  const message = await em.getRepository(RoomMessage).findOneBy({ id: messageId, roomId });
  if (!message || !messageVisibleTo(viewer, message)) throw notFound('message');
  return message;
}
