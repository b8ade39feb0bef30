import { DataSource, EntityManager } from 'typeorm';
import { conflict, forbidden, notFound } from '../../runtime/service-error';
import { Room, RoomAppeal, RoomApproval, RoomMessage, RoomModerationCase } from '../entities';
import { ReportReason } from '../entities/room-moderation-case';
import { newId } from '../rules/ids';
import { reportsHide } from '../rules/room-rules';
import { requestApproval } from './approvals';
import { Actor, SYSTEM, appendRoomEvent } from './room-log';
import { EndUserCaller, actorOf, assertWritable, reachAsMember, reachRoom, visibleMessage } from './room-access';
import { databaseNow } from '../clock';

function viewCase(c: RoomModerationCase) {
  return {
    id: c.id,
    roomId: c.roomId,
    messageId: c.messageId,
    reason: c.reason,
    state: c.state,
    reportCount: c.reportCount,
    createdAt: c.createdAt.toISOString(),
  };
}

function viewAppeal(a: RoomAppeal) {
  return { id: a.id, roomId: a.roomId, caseId: a.caseId, statement: a.statement, approvalId: a.approvalId };
}

function lockCase(em: EntityManager, where: { id?: string; messageId?: string; roomId?: string }) {
  return em.getRepository(RoomModerationCase).createQueryBuilder('c').setLock('pessimistic_write').where(where).getOne();
}

export interface ReportInput {
  messageId: string;
  reason: ReportReason;
  note?: string;
}

/**
 * A member reports another's message: one case per message, each reporter counted once (a repeat
 * answers the case, `created: false`). When distinct reporters reach the threshold an `open` case is
 * `actioned` and the message hidden, in the same transaction (docs/rooms.md#reactions-attachments-polls-and-moderation).
 */
export async function reportMessage(ds: DataSource, caller: EndUserCaller, roomId: string, input: ReportInput, threshold: number) {
  return ds.transaction(async (em) => {
    const { room, viewer } = await reachAsMember(em, caller, roomId, true);
    const message = await visibleMessage(em, viewer, roomId, input.messageId);
    if (message.authorPrincipalId === caller.principalId) throw forbidden('you cannot report your own message');
    assertWritable(room);
    if (message.deletedAt) throw conflict('the message was deleted');
    let kase = await lockCase(em, { messageId: message.id });
    if (kase) {
      const again = await em.query('SELECT 1 FROM room_moderation_reports WHERE case_id = $1 AND reporter_principal_id = $2', [kase.id, caller.principalId]);
      if (again.length > 0) return { created: false, moderationCase: viewCase(kase) };
    } else {
      const id = newId('mod');
      await em.query(
        `INSERT INTO room_moderation_cases (id, room_id, message_id, reason, state) VALUES ($1, $2, $3, $4, 'open')`,
        [id, roomId, message.id, input.reason]);
      kase = (await lockCase(em, { id }))!;
    }
    await em.query(
      'INSERT INTO room_moderation_reports (case_id, reporter_principal_id, reason, note) VALUES ($1, $2, $3, $4)',
      [kase.id, caller.principalId, input.reason, input.note ?? null]);
    kase.reportCount += 1;
    const actor = actorOf(caller);
    await appendRoomEvent(em, room, {
      type: 'moderation.reported', visibility: 'internal', audience: caller.principalId, actor,
      data: { caseId: kase.id, messageId: message.id, reason: input.reason, reportCount: kase.reportCount },
    });
    if (reportsHide(kase.state, kase.reportCount, threshold)) {
      kase.state = 'actioned';
      await em.query('UPDATE room_messages SET hidden = true WHERE id = $1', [message.id]);
      // The case id stays out of this entry: only the author and internal readers are told it.
      await appendRoomEvent(em, room, { type: 'message.hidden', visibility: message.visibility, actor: SYSTEM, data: { messageId: message.id } });
    }
    kase.updatedAt = await databaseNow(em);
    await em.getRepository(RoomModerationCase).save(kase);
    return { created: true, moderationCase: viewCase(kase) };
  });
}

/**
 * The message's author appeals an `actioned` case: the case becomes `appealed` and an `appeal` approval
 * waits for a person (decided by `decideAppeal`).
 */
export async function appealCase(ds: DataSource, caller: EndUserCaller, roomId: string, caseId: string, statement: string) {
  return ds.transaction(async (em) => {
    const { room } = await reachRoom(em, caller, roomId, true);
    const kase = await lockCase(em, { id: caseId, roomId });
    if (!kase) throw notFound('moderation case');
    const message = await em.getRepository(RoomMessage).findOneByOrFail({ id: kase.messageId });
    if (message.authorPrincipalId !== caller.principalId) throw forbidden('only the message\'s author may appeal');
    assertWritable(room);
    if (kase.state !== 'actioned') throw conflict(`the case is ${kase.state}; only an actioned case may be appealed`);
    const appealId = newId('apl');
    const actor = actorOf(caller);
    const approvalId = await requestApproval(em, room, {
      kind: 'appeal', subjectId: appealId, action: { type: 'restore_message', preview: statement.slice(0, 500) },
      requestedBy: { type: 'end_user', id: caller.endUserId }, requesterPrincipalId: caller.principalId,
    }, actor);
    await em.query(
      'INSERT INTO room_appeals (id, room_id, case_id, appellant_principal_id, statement, approval_id) VALUES ($1, $2, $3, $4, $5, $6)',
      [appealId, roomId, caseId, caller.principalId, statement, approvalId]);
    await em.query(`UPDATE room_moderation_cases SET state = 'appealed', updated_at = now() WHERE id = $1`, [caseId]);
    await appendRoomEvent(em, room, {
      type: 'moderation.appealed', visibility: 'internal', audience: caller.principalId, actor,
      data: { caseId, appealId, approvalId, messageId: message.id },
    });
    return viewAppeal(await em.getRepository(RoomAppeal).findOneByOrFail({ id: appealId }));
  });
}

/**
 * The effect of a person's decision on an `appeal` approval, inside the decision's transaction
 * (docs/rooms.md#reactions-attachments-polls-and-moderation): approved un-hides the message (`message.restored`) and the case is `reversed`;
 * rejected leaves it hidden and the case `upheld`.
 */
export async function decideAppeal(em: EntityManager, approval: RoomApproval, decision: 'approved' | 'rejected', actor: Actor) {
  const appeal = await em.getRepository(RoomAppeal).findOneByOrFail({ id: approval.subjectId });
  const room = await em.getRepository(Room).createQueryBuilder('r').setLock('pessimistic_write').where('r.id = :id', { id: appeal.roomId }).getOneOrFail();
  const kase = (await lockCase(em, { id: appeal.caseId }))!;
  if (kase.state !== 'appealed') return;
  kase.state = decision === 'approved' ? 'reversed' : 'upheld';
  kase.updatedAt = await databaseNow(em);
  await em.getRepository(RoomModerationCase).save(kase);
  if (decision === 'approved') {
    const message = await em.getRepository(RoomMessage).findOneByOrFail({ id: kase.messageId });
    await em.query('UPDATE room_messages SET hidden = false WHERE id = $1', [message.id]);
    await appendRoomEvent(em, room, { type: 'message.restored', visibility: message.visibility, actor, data: { messageId: message.id } });
  }
}
