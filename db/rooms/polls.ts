import { DataSource } from 'typeorm';
import { conflict, notFound, validationFailed } from '../../runtime/service-error';
import { RoomMessage, RoomPoll } from '../entities';
import { appendRoomEvent, messageVisibleTo, viewPoll } from './room-log';
import { EndUserCaller, actorOf, assertWritable, reachAsMember } from './room-access';

/** One answer per principal: a later PUT replaces the earlier; a deleted poll takes none. */
export async function respondToPoll(ds: DataSource, caller: EndUserCaller, roomId: string, pollId: string, optionIndex: number) {
  return ds.transaction(async (em) => {
    const { room, viewer } = await reachAsMember(em, caller, roomId, true);
    const poll = await em.getRepository(RoomPoll).findOneBy({ id: pollId, roomId });
    const message = poll ? await em.getRepository(RoomMessage).findOneByOrFail({ id: poll.messageId }) : null;
    if (!poll || !message || !messageVisibleTo(viewer, message)) throw notFound('poll');
    assertWritable(room);
    if (message.deletedAt) throw conflict('the poll\'s message was deleted');
    if (optionIndex >= poll.options.length) {
      throw validationFailed([{ path: 'optionIndex', message: `must be below ${poll.options.length}, the number of options` }]);
    }
    await em.query(
      `INSERT INTO room_poll_responses (poll_id, principal_id, option_index) VALUES ($1, $2, $3)
       ON CONFLICT (poll_id, principal_id) DO UPDATE SET option_index = EXCLUDED.option_index, updated_at = now()`,
      [pollId, caller.principalId, optionIndex]);
    await appendRoomEvent(em, room, {
      type: 'poll.responded', visibility: 'customer', actor: actorOf(caller), data: { pollId, messageId: message.id },
    });
    return viewPoll(em, poll, viewer);
  });
}
