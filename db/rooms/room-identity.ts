import { EntityManager } from 'typeorm';
import { principalIdOf } from '../rules/room-rules';

/**
 * Other columns naming an end user's room principal, with their room column. An end user only ever
 * appears in rooms it has a member record in (records are never deleted), so those rooms bound the scan.
 */
const PRINCIPAL_COLUMNS: Array<[string, string, string]> = [
  ['rooms', 'id', 'created_by_principal_id'],
  ['room_messages', 'room_id', 'author_principal_id'],
  ['room_approvals', 'room_id', 'requester_principal_id'],
  ['room_events', 'room_id', 'audience_principal_id'],
  ['room_attachments', 'room_id', 'uploader_principal_id'],
  ['room_appeals', 'room_id', 'appellant_principal_id'],
  ['room_handoffs', 'room_id', 'requested_by_id'],
];

/**
 * Rows one per principal and key (table, key columns, principal column, parent table holding room_id):
 * where both principals have one, the signed user's stays, so a reaction, poll answer, report or solve
 * session join is counted once.
 */
const KEYED_PRINCIPAL_ROWS: Array<[string, string[], string, string]> = [
  ['room_reactions', ['message_id', 'emoji'], 'principal_id', 'room_messages'],
  ['room_poll_responses', ['poll_id'], 'principal_id', 'room_polls'],
  ['room_moderation_reports', ['case_id'], 'reporter_principal_id', 'room_moderation_cases'],
  ['room_solve_participants', ['session_id'], 'principal_id', 'room_solve_sessions'],
];

/**
 * Carries an anonymous end user's rooms onto the signed end user (identity merge): memberships, messages,
 * runs, approvals and what it may read in the logs now belong to the signed user's principal, which is
 * the same in every room (docs/rooms.md#visibility). Where both were members of one room, one record remains, the
 * signed user's, with the stronger standing: owner if either owned the room (then joined); else removed
 * if either was removed (a removal is about the person); else the further of joined, invited, left; the
 * earlier invitation and join, the further read marker. Past log entries keep the actor and data they
 * were written with. The rooms are locked in id order first, as every room write locks its room.
 */
export async function mergeRoomPrincipal(em: EntityManager, productId: string, anonymousId: string, endUserId: string): Promise<Record<string, number>> {
  const from = principalIdOf(productId, 'end_user', anonymousId);
  const to = principalIdOf(productId, 'end_user', endUserId);
  const locked: Array<{ id: string }> = await em.query(
    `SELECT r.id FROM rooms r WHERE r.id IN (SELECT room_id FROM room_members WHERE principal_id = $1) ORDER BY r.id FOR UPDATE`, [from]);
  if (locked.length === 0) return { room_members: 0, room_messages: 0, room_agent_runs: 0 };
  const roomIds = locked.map((r) => r.id);
  await em.query(
    `UPDATE room_members s SET
       role = CASE WHEN 'owner' IN (s.role, a.role) THEN 'owner' ELSE s.role END,
       state = CASE WHEN 'owner' IN (s.role, a.role) THEN 'joined'
                    WHEN 'removed' IN (s.state, a.state) THEN 'removed'
                    WHEN 'joined' IN (s.state, a.state) THEN 'joined'
                    WHEN 'invited' IN (s.state, a.state) THEN 'invited'
                    ELSE 'left' END,
       invited_at = least(s.invited_at, a.invited_at),
       joined_at = least(s.joined_at, a.joined_at),
       read_marker = greatest(s.read_marker, a.read_marker)
      FROM room_members a
     WHERE a.principal_id = $1 AND s.principal_id = $2 AND s.room_id = a.room_id`,
    [from, to]);
  const [, merged]: [unknown, number] = await em.query(
    `DELETE FROM room_members a WHERE a.principal_id = $1
        AND EXISTS (SELECT 1 FROM room_members s WHERE s.room_id = a.room_id AND s.principal_id = $2)`, [from, to]);
  const [, movedMembers]: [unknown, number] = await em.query(
    'UPDATE room_members SET principal_id = $2, end_user_id = $3 WHERE principal_id = $1', [from, to, endUserId]);
  const [, runs]: [unknown, number] = await em.query(
    `UPDATE room_agent_runs SET starter_principal_id = $2, started_by_id = $3
      WHERE room_id = ANY($4) AND starter_principal_id = $1 AND started_by_type = 'end_user'`,
    [from, to, endUserId, roomIds]);
  const moved: Record<string, number> = { room_members: movedMembers + merged, room_agent_runs: runs };
  for (const [table, room, column] of PRINCIPAL_COLUMNS) {
    const [, count]: [unknown, number] = await em.query(
      `UPDATE ${table} SET ${column} = $2 WHERE ${room} = ANY($3) AND ${column} = $1`, [from, to, roomIds]);
    if (table === 'room_messages') moved[table] = count;
  }
  for (const [table, keys, column, parent] of KEYED_PRINCIPAL_ROWS) {
    const same = keys.map((k) => `s.${k} = a.${k}`).join(' AND ');
    const [dropped]: [Array<{ parent: string }>] = await em.query(
      `DELETE FROM ${table} a USING ${parent} p
        WHERE a.${keys[0]} = p.id AND p.room_id = ANY($3) AND a.${column} = $1
          AND EXISTS (SELECT 1 FROM ${table} s WHERE ${same} AND s.${column} = $2)
        RETURNING a.${keys[0]} AS parent`, [from, to, roomIds]);
    if (table === 'room_moderation_reports' && dropped.length > 0) {
      await em.query(
        `UPDATE room_moderation_cases c SET report_count = c.report_count - d.n
           FROM (SELECT parent, count(*)::int AS n FROM unnest($1::text[]) AS parent GROUP BY parent) d WHERE c.id = d.parent`,
        [dropped.map((d) => d.parent)]);
    }
    await em.query(
      `UPDATE ${table} a SET ${column} = $2 FROM ${parent} p WHERE a.${keys[0]} = p.id AND p.room_id = ANY($3) AND a.${column} = $1`,
      [from, to, roomIds]);
  }
  await em.query(
    `UPDATE room_approvals SET requested_by = jsonb_set(requested_by, '{id}', to_jsonb($2::text))
      WHERE room_id = ANY($4) AND requester_principal_id = $3 AND requested_by->>'type' = 'end_user' AND requested_by->>'id' = $1`,
    [anonymousId, endUserId, to, roomIds]);
  return moved;
}
