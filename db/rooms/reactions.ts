import { DataSource } from 'typeorm';
import { conflict } from '../../runtime/service-error';
import { RoomReaction } from '../entities';
import { MAX_REACTION_EMOJI } from '../rules/room-rules';
import { appendRoomEvent } from './room-log';
import { EndUserCaller, actorOf, assertWritable, reachAsMember, visibleMessage } from './room-access';

/**
 * Adds the caller's reaction with this emoji, or removes it when it is there (a toggle). A deleted
 * message takes none, and a message holds at most 20 distinct emoji.
 */
export async function toggleReaction(ds: DataSource, caller: EndUserCaller, roomId: string, messageId: string, emoji: string) {
  return ds.transaction(async (em) => {
    const { room, viewer } = await reachAsMember(em, caller, roomId, true);
    const message = await visibleMessage(em, viewer, roomId, messageId);
    assertWritable(room);
    if (message.deletedAt) throw conflict('the message was deleted');
    const repo = em.getRepository(RoomReaction);
    const key = { messageId, emoji, principalId: caller.principalId };
    const removed = (await repo.delete(key)).affected ?? 0;
    const reacted = removed === 0;
    if (reacted) {
      const [{ distinct, present }]: Array<{ distinct: string; present: boolean | null }> = await em.query(
        'SELECT count(DISTINCT emoji) AS distinct, bool_or(emoji = $2) AS present FROM room_reactions WHERE message_id = $1', [messageId, emoji]);
      if (!present && Number(distinct) >= MAX_REACTION_EMOJI) throw conflict(`a message takes at most ${MAX_REACTION_EMOJI} distinct emoji`);
      await em.query('INSERT INTO room_reactions (message_id, emoji, principal_id) VALUES ($1, $2, $3)', [messageId, emoji, caller.principalId]);
    }
    const count = await repo.countBy({ messageId, emoji });
    await appendRoomEvent(em, room, {
      type: 'reaction.toggled', visibility: message.visibility, actor: actorOf(caller), data: { messageId, emoji, reacted, count },
    });
    return { messageId, emoji, reacted, count };
  });
}
