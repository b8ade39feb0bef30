import { DataSource, EntityManager } from 'typeorm';
import { validationFailed } from '../../runtime/service-error';
import { RoomAgentRun, RoomEvent, RoomMember, RoomMessage } from '../entities';
import { needsSnapshot } from '../rules/room-rules';
import { RoomViewer, viewEvents, viewMember, viewMessages, viewRoom } from './room-log';
import { viewRun } from './agent-runs';
import { handoffOf } from './handoffs';
import { promisesChangedAfter, visiblePromises } from './promises';
import { openSolveSessions } from './solve-sessions';
import { ACTIVE_STATES, EndUserCaller, RoomCaller, reachAsMember } from './room-access';

const CATCH_UP_MESSAGES = 100;

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
 * GET /events (docs/rooms.md#the-event-log-snapshot-and-catch-up): the visible entries after `after`, or a snapshot of the whole current state
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
