import { DataSource, EntityManager } from 'typeorm';
import { Room, RoomAttachment, RoomEvent, RoomMember, RoomMessage, RoomPoll } from '../entities';
import { enqueueEvent } from '../outbox';
import { ANONYMOUS_ID } from '../rules/ids';
import { RoomReader, eventVisibleTo } from '../rules/room-rules';

/** The 13 room events that also leave as webhooks (docs/rooms.md#room-webhooks); every other entry stays in the log. */
export const ROOM_WEBHOOK_TYPES = new Set([
  'room.created', 'room.status_changed', 'room.updated', 'room.message.created', 'room.decision.recorded',
  'room.promise.approved', 'room.promise.completed', 'room.promise.missed', 'room.knowledge.published',
  'room.canvas.updated', 'room.agent.action_executed', 'room.cohort.invited', 'room.release.receipt_sent',
]);

export type ActorType = RoomEvent['actorType'];
export type Actor = { type: ActorType; id: string | null };
/** The service itself (a workflow step, a job), as an entry's actor. */
export const SYSTEM: Actor = { type: 'system', id: null };

export interface NewRoomEvent {
  type: string;
  visibility: 'customer' | 'internal';
  /** An internal entry its subject may still read (the run's starter, a reporter). */
  audience?: string | null;
  actor: Actor;
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

/**
 * An end user reads another member's anonymous id as null: that id is what a merge would take, so only its
 * holder, keys and teammates see it (the principalId stays the stable, opaque name of every member).
 */
function shownEndUserId(m: RoomMember, viewer: RoomViewer | null): string | null {
  if (m.type !== 'end_user') return null;
  const own = viewer?.principalId === m.principalId;
  return viewer === null || viewer.internal || own || !ANONYMOUS_ID.test(m.endUserId!) ? m.endUserId : null;
}

export function viewMember(m: RoomMember, viewer: RoomViewer | null) {
  return {
    principalId: m.principalId,
    type: m.type,
    endUserId: shownEndUserId(m, viewer),
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

interface PollView {
  id: string;
  roomId: string;
  options: Array<{ index: number; text: string; count: number }>;
  totalResponses: number;
  myOptionIndex: number | null;
}

/** What a message carries beyond its row, as one reader may see it (loaded by `messageExtras`). */
interface MessageExtras {
  attachments: ReturnType<typeof viewAttachment>[];
  poll: PollView | null;
  reactions: Array<{ emoji: string; count: number; me: boolean }>;
  moderationCaseId: string | null;
}

export function viewAttachment(a: RoomAttachment) {
  return {
    id: a.id,
    roomId: a.roomId,
    filename: a.filename,
    contentType: a.contentType,
    size: a.size,
    sha256: a.sha256,
    uploadedBy: a.uploaderPrincipalId,
    messageId: a.messageId,
    createdAt: a.createdAt.toISOString(),
  };
}

/** A poll with its counts and the reader's own answer. */
export async function viewPoll(em: EntityManager, poll: RoomPoll, reader: RoomReader): Promise<PollView> {
  return (await pollViews(em, [poll], reader)).get(poll.id)!;
}

async function pollViews(em: EntityManager, polls: RoomPoll[], reader: RoomReader): Promise<Map<string, PollView>> {
  const ids = polls.map((p) => p.id);
  const counts: Array<{ poll_id: string; option_index: number; n: string }> = ids.length === 0 ? [] : await em.query(
    `SELECT poll_id, option_index, count(*) AS n FROM room_poll_responses WHERE poll_id = ANY($1) GROUP BY poll_id, option_index`, [ids]);
  const mine: Array<{ poll_id: string; option_index: number }> = ids.length === 0 || reader.principalId === null ? [] : await em.query(
    `SELECT poll_id, option_index FROM room_poll_responses WHERE poll_id = ANY($1) AND principal_id = $2`, [ids, reader.principalId]);
  const out = new Map<string, PollView>();
  for (const poll of polls) {
    const countOf = (index: number) => Number(counts.find((c) => c.poll_id === poll.id && c.option_index === index)?.n ?? 0);
    const options = poll.options.map((text, index) => ({ index, text, count: countOf(index) }));
    out.set(poll.id, {
      id: poll.id,
      roomId: poll.roomId,
      options,
      totalResponses: options.reduce((sum, o) => sum + o.count, 0),
      myOptionIndex: mine.find((r) => r.poll_id === poll.id)?.option_index ?? null,
    });
  }
  return out;
}

/** Attachments, poll, reactions and moderation case of these messages, in a few queries for all of them. */
async function messageExtras(em: EntityManager | DataSource, messages: RoomMessage[], reader: RoomReader): Promise<Map<string, MessageExtras>> {
  const ids = messages.map((m) => m.id);
  const out = new Map<string, MessageExtras>(ids.map((id) => [id, { attachments: [], poll: null, reactions: [], moderationCaseId: null }]));
  if (ids.length === 0) return out;
  const manager = em instanceof DataSource ? em.manager : em;
  const attachments = await manager.getRepository(RoomAttachment).createQueryBuilder('a')
    .where('a.message_id IN (:...ids) AND a.expired_at IS NULL', { ids }).orderBy('a.created_at', 'ASC').addOrderBy('a.id', 'ASC').getMany();
  for (const a of attachments) out.get(a.messageId!)!.attachments.push(viewAttachment(a));
  const polls = messages.some((m) => m.kind === 'poll')
    ? await manager.getRepository(RoomPoll).createQueryBuilder('p').where('p.message_id IN (:...ids)', { ids }).getMany() : [];
  const pollView = await pollViews(manager, polls, reader);
  for (const p of polls) out.get(p.messageId)!.poll = pollView.get(p.id)!;
  const reactions: Array<{ message_id: string; emoji: string; n: string; me: boolean }> = await manager.query(
    `SELECT message_id, emoji, count(*) AS n, coalesce(bool_or(principal_id = $2), false) AS me FROM room_reactions
      WHERE message_id = ANY($1) GROUP BY message_id, emoji ORDER BY min(created_at), emoji`, [ids, reader.principalId]);
  for (const r of reactions) out.get(r.message_id)!.reactions.push({ emoji: r.emoji, count: Number(r.n), me: r.me });
  const cases: Array<{ id: string; message_id: string }> = await manager.query(
    'SELECT id, message_id FROM room_moderation_cases WHERE message_id = ANY($1)', [ids]);
  for (const c of cases) out.get(c.message_id)!.moderationCaseId = c.id;
  return out;
}

/** Whether this reader is denied the message's content: deleted, or hidden and neither its author nor internal. */
export function contentWithheld(m: RoomMessage, reader: RoomReader): boolean {
  const own = reader.principalId !== null && m.authorPrincipalId === reader.principalId;
  return m.deletedAt !== null || (m.hidden && !own && !reader.internal);
}

/**
 * A message as this reader may see it: a withheld body is "", and so are its poll's option texts and its
 * attachments; the moderation case is named only to its author and internal readers.
 */
function viewMessage(m: RoomMessage, reader: RoomReader, extras: MessageExtras) {
  const own = reader.principalId !== null && m.authorPrincipalId === reader.principalId;
  const withheld = contentWithheld(m, reader);
  const poll = extras.poll && withheld ? { ...extras.poll, options: extras.poll.options.map((o) => ({ ...o, text: '' })) } : extras.poll;
  return {
    id: m.id,
    roomId: m.roomId,
    seq: m.seq,
    author: { type: m.authorType, principalId: m.authorPrincipalId },
    kind: m.kind,
    body: withheld ? '' : m.body,
    visibility: m.visibility,
    attachments: withheld ? [] : extras.attachments,
    poll,
    reactions: extras.reactions,
    hidden: m.hidden,
    moderationCaseId: own || reader.internal ? extras.moderationCaseId : null,
    editedAt: m.editedAt ? m.editedAt.toISOString() : null,
    deletedAt: m.deletedAt ? m.deletedAt.toISOString() : null,
    createdAt: m.createdAt.toISOString(),
  };
}

export type MessageView = ReturnType<typeof viewMessage>;

/** Messages as this reader may see them, in the order given. */
export async function viewMessages(em: EntityManager | DataSource, messages: RoomMessage[], reader: RoomReader): Promise<MessageView[]> {
  const extras = await messageExtras(em, messages, reader);
  return messages.map((m) => viewMessage(m, reader, extras.get(m.id)!));
}

export async function viewOneMessage(em: EntityManager, messageId: string, reader: RoomReader): Promise<MessageView> {
  const [view] = await viewMessages(em, [await em.getRepository(RoomMessage).findOneByOrFail({ id: messageId })], reader);
  return view;
}

/** Log entries as a reader sees them; an entry about a message carries that message as the reader may see it. */
export async function viewEvents(em: EntityManager, events: RoomEvent[], reader: RoomReader) {
  const visible = events.filter((e) => eventVisibleTo(reader, e));
  const messageIds = [...new Set(visible.map((e) => e.data.messageId).filter((id): id is string => typeof id === 'string'))];
  const messages = messageIds.length === 0 ? [] : await em.getRepository(RoomMessage).createQueryBuilder('m')
    .where('m.id IN (:...ids)', { ids: messageIds }).getMany();
  const shown = messages.filter((m) => messageVisibleTo(reader, m));
  const views = await viewMessages(em, shown, reader);
  const byId = new Map(shown.map((m, i) => [m.id, views[i]]));
  return visible.map((e) => {
    const message = typeof e.data.messageId === 'string' ? byId.get(e.data.messageId) : undefined;
    return {
      seq: e.seq,
      type: e.type,
      visibility: e.visibility,
      actor: { type: e.actorType, id: e.actorId },
      createdAt: e.createdAt.toISOString(),
      data: message ? { ...e.data, message } : e.data,
    };
  });
}
