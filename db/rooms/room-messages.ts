import { DataSource, EntityManager } from 'typeorm';
import { conflict, forbidden } from '../../runtime/service-error';
import { appendRoomEvent, viewOneMessage } from './room-log';
import { attachToMessage, lockAttachable } from './attachments';
import {
  EndUserCaller, NewMessage, RoomCaller, actorOf, assertWritable, ensureTeammateMember, insertMessage, reachAsMember, reachRoom, visibleMessage,
} from './room-access';

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
