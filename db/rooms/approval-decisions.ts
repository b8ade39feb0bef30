import { DataSource } from 'typeorm';
import { conflict, notFound } from '../../runtime/service-error';
import { Room, RoomApproval } from '../entities';
import { Actor, appendRoomEvent } from './room-log';
import { approvalEvent, lockApproval, viewApproval } from './approvals';
import { decideRunApproval, lockRun } from './agent-runs';
import { decidePromiseApproval } from './promises';
import { decideAppeal } from './moderation';
import { databaseNow } from '../clock';

// Deciding an approval reaches into the domain that asked for it, so it lives above them all.

/** Only a person decides, in one transaction with the cancel's lock order: the run, then its approval. */
export async function decideApproval(
  ds: DataSource, teammate: { organizationId: string; teammateId: string }, approvalId: string, decision: 'approved' | 'rejected', note: string | null,
) {
  return ds.transaction(async (em) => {
    const found = await em.getRepository(RoomApproval).findOneBy({ id: approvalId, organizationId: teammate.organizationId });
    if (!found) throw notFound('approval');
    const run = found.kind === 'agent_action' ? await lockRun(em, found.subjectId) : null;
    const approval = (await lockApproval(em, approvalId))!;
    if (approval.status !== 'pending') throw conflict(`the approval is already ${approval.status}`);
    // An approval made while the room was being archived escaped the archive's cancel; it decides nothing.
    const room = await em.getRepository(Room).findOneByOrFail({ id: approval.roomId });
    if (room.status === 'archived') throw conflict('the room is archived');
    const actor: Actor = { type: 'teammate', id: teammate.teammateId };
    Object.assign(approval, { status: decision, decidedByTeammateId: teammate.teammateId, decidedAt: await databaseNow(em), note });
    await em.getRepository(RoomApproval).save(approval);
    await approvalEvent(em, approval, 'approval.decided', actor);
    if (run) await decideRunApproval(em, run, approvalId, decision, actor);
    if (approval.kind === 'promise') await decidePromiseApproval(em, approval, decision, actor);
    if (approval.kind === 'knowledge') {
      const published = decision === 'approved';
      await em.query(
        `UPDATE room_knowledge SET state = $2, published_at = CASE WHEN $3 THEN now() END WHERE id = $1`,
        [approval.subjectId, published ? 'published' : 'rejected', published]);
      await appendRoomEvent(em, room, {
        type: published ? 'room.knowledge.published' : 'knowledge.rejected', visibility: published ? 'customer' : 'internal', actor,
        data: { knowledgeId: approval.subjectId, approvalId },
      });
    }
    if (approval.kind === 'appeal') await decideAppeal(em, approval, decision, actor);
    return viewApproval(approval);
  });
}
