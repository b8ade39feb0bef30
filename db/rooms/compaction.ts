import { DataSource } from 'typeorm';

/** Rooms compacted per statement, so one pass never holds many room locks at once. */
const ROOMS_PER_BATCH = 100;
/** Batches per call; what is left waits for the next maintenance round. */
const MAX_BATCHES = 50;

/**
 * Removes room events older than the retention (docs/rooms.md#the-event-log-snapshot-and-catch-up) and raises each room's `compacted_through`
 * to the highest seq removed; a reader whose `after` is behind it gets a snapshot. Only a prefix of a
 * room's log goes: seq order and commit time can differ by a moment (concurrent writers wait on the room
 * row), so an old event after a younger one stays until that one ages too. The room row is updated, so
 * this waits for, and orders with, the room's writers.
 */
export async function compactRoomEvents(ds: DataSource, retentionMs: number): Promise<{ rooms: number; events: number }> {
  const total = { rooms: 0, events: 0 };
  for (let batch = 0; batch < MAX_BATCHES; batch++) {
    const [row]: Array<{ candidates: number; rooms: number; events: number }> = await ds.query(
      `WITH cutoff AS (SELECT now() - $1::bigint * interval '1 millisecond' AS at),
       old AS (
         SELECT DISTINCT e.room_id FROM room_events e, cutoff WHERE e.created_at < cutoff.at LIMIT $2
       ), cut AS (
         SELECT old.room_id, coalesce(
           (SELECT min(y.seq) - 1 FROM room_events y, cutoff WHERE y.room_id = old.room_id AND y.created_at >= cutoff.at),
           (SELECT max(a.seq) FROM room_events a WHERE a.room_id = old.room_id)) AS through
           FROM old
       ), locked AS (
         -- In id order, as every writer of several rooms (identity merge) locks them.
         SELECT r.id FROM rooms r WHERE r.id IN (SELECT room_id FROM old) ORDER BY r.id FOR UPDATE
       ), moved AS (
         UPDATE rooms r SET compacted_through = cut.through FROM cut
          WHERE r.id = cut.room_id AND r.id IN (SELECT id FROM locked) AND cut.through > r.compacted_through
          RETURNING r.id, r.compacted_through
       ), gone AS (
         DELETE FROM room_events e USING moved WHERE e.room_id = moved.id AND e.seq <= moved.compacted_through RETURNING 1
       )
       SELECT (SELECT count(*) FROM old)::int AS candidates, (SELECT count(*) FROM moved)::int AS rooms,
              (SELECT count(*) FROM gone)::int AS events`,
      [retentionMs, ROOMS_PER_BATCH]);
    total.rooms += row.rooms;
    total.events += row.events;
    // A batch that moved nothing would find the same rooms again (their old events wait behind a younger one).
    if (row.candidates < ROOMS_PER_BATCH || row.rooms === 0) break;
  }
  return total;
}
