import { DataSource, EntityManager } from 'typeorm';
import { ServiceError, conflict, notFound } from '../../runtime/service-error';
import { RoomSolveParticipant, RoomSolveSession } from '../entities';
import { newId } from '../rules/ids';
import { sha256Hex } from '../rules/secrets';
import { Actor, appendRoomEvent } from './room-log';
import { EndUserCaller, reachAsMember } from './room-access';

type RoomRef = { id: string; organizationId: string; productId: string };

function viewSolveSession(s: RoomSolveSession, participantCount: number) {
  return {
    id: s.id,
    roomId: s.roomId,
    state: s.state,
    recordingTerms: { version: s.termsVersion, text: s.termsText, sha256: s.termsSha256 },
    participantCount,
    createdAt: s.createdAt.toISOString(),
    endedAt: s.endedAt ? s.endedAt.toISOString() : null,
  };
}

/** `open_solve_session`'s effect, in the job's transaction. */
export async function openSolveSession(em: EntityManager, room: RoomRef, jobId: string, terms: { version: string; text: string }, actor: Actor) {
  const id = newId('sol');
  await em.query(
    `INSERT INTO room_solve_sessions (id, room_id, job_id, state, terms_version, terms_text, terms_sha256)
     VALUES ($1, $2, $3, 'open', $4, $5, $6)`,
    [id, room.id, jobId, terms.version, terms.text, sha256Hex(terms.text)]);
  await appendRoomEvent(em, room, { type: 'solve_session.opened', visibility: 'customer', actor, data: { sessionId: id } });
  return id;
}

function lockSolveSession(em: EntityManager, sessionId: string) {
  return em.getRepository(RoomSolveSession).createQueryBuilder('s').setLock('pessimistic_write').where('s.id = :sessionId', { sessionId }).getOne();
}

/** `end_solve_session`'s effect; false when the session is no longer open. */
export async function endSolveSession(em: EntityManager, room: RoomRef, sessionId: string, actor: Actor): Promise<boolean> {
  const session = await lockSolveSession(em, sessionId);
  if (!session || session.state !== 'open') return false;
  await em.query(`UPDATE room_solve_sessions SET state = 'ended', ended_at = now() WHERE id = $1`, [sessionId]);
  await appendRoomEvent(em, room, { type: 'solve_session.ended', visibility: 'customer', actor, data: { sessionId } });
  return true;
}

/** The open sessions of a room with their participant counts (the snapshot's): the newest 50, oldest first. */
export async function openSolveSessions(em: EntityManager | DataSource, roomId: string) {
  const rows: Array<{ id: string; n: number }> = await em.query(
    `SELECT * FROM (
       SELECT s.id, s.created_at, (SELECT count(*)::int FROM room_solve_participants p WHERE p.session_id = s.id) AS n
         FROM room_solve_sessions s WHERE s.room_id = $1 AND s.state = 'open' ORDER BY s.created_at DESC, s.id DESC LIMIT 50) newest
      ORDER BY created_at, id`, [roomId]);
  if (rows.length === 0) return [];
  const sessions = await em.getRepository(RoomSolveSession).findBy(rows.map((r) => ({ id: r.id })));
  const byId = new Map(sessions.map((s) => [s.id, s]));
  return rows.map((r) => viewSolveSession(byId.get(r.id)!, r.n));
}

export interface Consent {
  termsVersion: string;
  termsSha256: string;
  accepted: true;
}

function viewJoin(p: RoomSolveParticipant) {
  const acceptedAt = p.acceptedAt.toISOString();
  return {
    sessionId: p.sessionId,
    principalId: p.principalId,
    joinedAt: acceptedAt,
    consent: { id: p.consentId, termsVersion: p.termsVersion, termsSha256: p.termsSha256, accepted: true, acceptedAt },
  };
}

/**
 * An end user joins a solve session, consenting to exactly its recording terms (version and the hash of
 * the text). A repeat answers the first join; an ended session takes nobody new.
 */
export async function joinSolveSession(ds: DataSource, caller: EndUserCaller, roomId: string, sessionId: string, consent: Consent) {
  return ds.transaction(async (em) => {
    const { room } = await reachAsMember(em, caller, roomId, true);
    const session = await em.getRepository(RoomSolveSession).findOneBy({ id: sessionId, roomId: room.id });
    if (!session) throw notFound('solve session');
    const existing = await em.getRepository(RoomSolveParticipant).findOneBy({ sessionId, principalId: caller.principalId });
    if (existing) return viewJoin(existing);
    if (session.state !== 'open') throw conflict('the solve session has ended');
    if (room.status === 'archived') throw conflict('the room is archived');
    if (consent.termsVersion !== session.termsVersion || consent.termsSha256.toLowerCase() !== session.termsSha256) {
      throw new ServiceError('CONSENT_INVALID', 'the consent does not name this session\'s recording terms (version and SHA-256 of the text)', {
        termsVersion: session.termsVersion, termsSha256: session.termsSha256,
      });
    }
    await em.query(
      `INSERT INTO room_solve_participants (session_id, principal_id, consent_id, terms_version, terms_sha256) VALUES ($1, $2, $3, $4, $5)`,
      [sessionId, caller.principalId, newId('cns'), session.termsVersion, session.termsSha256]);
    await appendRoomEvent(em, room, {
      type: 'solve_session.joined', visibility: 'customer', actor: { type: 'end_user', id: caller.principalId },
      data: { sessionId, principalId: caller.principalId },
    });
    return viewJoin(await em.getRepository(RoomSolveParticipant).findOneByOrFail({ sessionId, principalId: caller.principalId }));
  });
}
