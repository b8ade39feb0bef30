import { EntityManager } from 'typeorm';
import { Room, RoomEvent, RoomMember, RoomMessage } from '../entities';
import { enqueueEvent } from '../outbox';
import { RoomReader, eventVisibleTo } from '../rules/room-rules';

/** The 13 room events that also leave as webhooks (ROOMS.md §9); every other entry stays in the log. */
export const ROOM_WEBHOOK_TYPES = new Set([
  'room.created', 'room.status_changed', 'room.updated', 'room.message.created', 'room.decision.recorded',
  'room.promise.approved', 'room.promise.completed', 'room.promise.missed', 'room.knowledge.published',
  'room.canvas.updated', 'room.agent.action_executed', 'room.cohort.invited', 'room.release.receipt_sent',
]);

export type ActorType = RoomEvent['actorType'];

export interface NewRoomEvent {
  type: string;
  visibility: 'customer' | 'internal';
  /** An internal entry its subject may still read (the run's starter, a reporter). */
  audience?: string | null;
  actor: { type: ActorType; id: string | null };
  /** Ids and small facts only: never message text, names or e-mail (it is also the webhook's data). */
  data: Record<string, unknown>;
}

type RoomRef = Pick<Room, 'id' | 'organizationId' | 'productId'>;

/**
 * Appends one entry in the change's transaction: the room row's head_seq is raised under its lock, so
 * seq is gap-free and ordered per room; the webhook of a `room.*` type is queued in the same transaction.
 */
export async function appendRoomEvent(em: EntityManager, room: RoomRef, event: NewRoomEvent): Promise<number> {
  const [rows]: [Array<{ head_seq: string }>, number] = await em.query(
    'UPDATE rooms SET head_seq = head_seq + 1, updated_at = now() WHERE id = $1 RETURNING head_seq', [room.id]);
  const seq = Number(rows[0].head_seq);
  const data = { roomId: room.id, seq, ...event.data };
  await em.query(
    `INSERT INTO room_events (room_id, seq, type, visibility, audience_principal_id, actor_type, actor_id, data)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [room.id, seq, event.type, event.visibility, event.audience ?? null, event.actor.type, event.actor.id, JSON.stringify(data)],
  );
  if (ROOM_WEBHOOK_TYPES.has(event.type)) {
    await enqueueEvent(em, { organizationId: room.organizationId, productId: room.productId, type: event.type, data });
  }
  return seq;
}

export interface RoomViewer extends RoomReader {
  /** The reader's member row, for `membership` and its own `readMarker`. */
  member: RoomMember | null;
}

export function viewMember(m: RoomMember, viewer: RoomViewer | null) {
  return {
    principalId: m.principalId,
    type: m.type,
    endUserId: m.type === 'end_user' ? m.endUserId : null,
    teammateId: m.type === 'teammate' ? m.teammateId : null,
    alias: m.type === 'agent' ? m.alias : null,
    role: m.role,
    visibility: m.visibility,
    state: m.state,
    invitedAt: m.invitedAt.toISOString(),
    joinedAt: m.joinedAt ? m.joinedAt.toISOString() : null,
    readMarker: viewer?.principalId === m.principalId ? m.readMarker : null,
  };
}

export function viewRoom(room: Room, viewer: RoomViewer | null) {
  return {
    id: room.id,
    title: room.title,
    kind: room.kind,
    purpose: room.purpose,
    status: room.status,
    visibility: room.visibility,
    createdBy: { type: room.createdByType, principalId: room.createdByPrincipalId },
    threadIds: room.threadIds,
    featureIds: room.featureIds,
    headSeq: room.headSeq,
    createdAt: room.createdAt.toISOString(),
    updatedAt: room.updatedAt.toISOString(),
    membership: viewer && !viewer.internal ? (viewer.member ? viewMember(viewer.member, viewer) : null) : null,
  };
}

export function messageVisibleTo(reader: RoomReader, m: RoomMessage): boolean {
  return reader.internal || m.visibility === 'customer';
}

/** A message as this reader may see it: deleted and hidden bodies are withheld (hidden ones not from its author). */
export function viewMessage(m: RoomMessage, reader: RoomReader) {
  const own = reader.principalId !== null && m.authorPrincipalId === reader.principalId;
  const withheld = m.deletedAt !== null || (m.hidden && !own && !reader.internal);
  return {
    id: m.id,
    roomId: m.roomId,
    seq: m.seq,
    author: { type: m.authorType, principalId: m.authorPrincipalId },
    kind: m.kind,
    body: withheld ? '' : m.body,
    visibility: m.visibility,
    attachments: [] as unknown[],
    poll: null,
    reactions: [] as unknown[],
    hidden: m.hidden,
    moderationCaseId: null,
    editedAt: m.editedAt ? m.editedAt.toISOString() : null,
    deletedAt: m.deletedAt ? m.deletedAt.toISOString() : null,
    createdAt: m.createdAt.toISOString(),
  };
}

/** Log entries as a reader sees them; an entry about a message carries that message as the reader may see it. */
export async function viewEvents(em: EntityManager, events: RoomEvent[], reader: RoomReader) {
  const visible = events.filter((e) => eventVisibleTo(reader, e));
  const messageIds = [...new Set(visible.map((e) => e.data.messageId).filter((id): id is string => typeof id === 'string'))];
  const messages = messageIds.length === 0 ? [] : await em.getRepository(RoomMessage).createQueryBuilder('m')
    .where('m.id IN (:...ids)', { ids: messageIds }).getMany();
  const byId = new Map(messages.map((m) => [m.id, m]));
  return visible.map((e) => {
    const message = typeof e.data.messageId === 'string' ? byId.get(e.data.messageId) : undefined;
    return {
      seq: e.seq,
      type: e.type,
      visibility: e.visibility,
      actor: { type: e.actorType, id: e.actorId },
      createdAt: e.createdAt.toISOString(),
      data: message && messageVisibleTo(reader, message) ? { ...e.data, message: viewMessage(message, reader) } : e.data,
    };
  });
}
