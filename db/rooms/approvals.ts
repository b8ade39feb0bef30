import { DataSource, EntityManager } from 'typeorm';
import { RoomApproval } from '../entities';
import { PageRequest, pageOf } from '../pagination';
import { newId } from '../rules/ids';
import { Actor, appendRoomEvent } from './room-log';
import { RoomCaller } from './room-access';

// Approvals a person decides: agent runs, knowledge, promises and appeals request them here.

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function viewApproval(a: RoomApproval) {
  return {
    id: a.id,
    roomId: a.roomId,
    kind: a.kind,
    status: a.status,
    subjectId: a.subjectId,
    action: a.action,
    requestedBy: a.requestedBy,
    decidedBy: a.decidedByTeammateId ? { teammateId: a.decidedByTeammateId } : null,
    decidedAt: iso(a.decidedAt),
    note: a.note,
    expiresAt: iso(a.expiresAt),
    createdAt: a.createdAt.toISOString(),
  };
}

/** What a pending approval asks a person to decide. */
interface ApprovalRequest {
  kind: RoomApproval['kind'];
  subjectId: string;
  action: { type: string; preview: string };
  requestedBy: { type: string; id: string | null };
  /** The end user who may read the approval's entries (a run's starter, an appellant). */
  requesterPrincipalId?: string | null;
  /** Unset: it never expires. */
  ttlMs?: number;
}

/** Writes a pending approval and its `approval.requested` entry, in the caller's transaction; answers its id. */
export async function requestApproval(
  em: EntityManager, room: { id: string; organizationId: string; productId: string }, request: ApprovalRequest, actor: Actor,
): Promise<string> {
  const id = newId('apr');
  await em.query(
    `INSERT INTO room_approvals (id, room_id, organization_id, product_id, kind, status, subject_id, action, requested_by,
       requester_principal_id, expires_at)
     VALUES ($1, $2, $3, $4, $5, 'pending', $6, $7, $8, $9, now() + $10::bigint * interval '1 millisecond')`,
    [id, room.id, room.organizationId, room.productId, request.kind, request.subjectId, JSON.stringify(request.action),
      JSON.stringify(request.requestedBy), request.requesterPrincipalId ?? null, request.ttlMs ?? null]);
  await approvalEvent(em, {
    id, roomId: room.id, organizationId: room.organizationId, productId: room.productId, kind: request.kind, status: 'pending',
    subjectId: request.subjectId, requesterPrincipalId: request.requesterPrincipalId ?? null,
  }, 'approval.requested', actor);
  return id;
}

type ApprovalEntry = Pick<RoomApproval, 'id' | 'roomId' | 'organizationId' | 'productId' | 'kind' | 'status' | 'subjectId' | 'requesterPrincipalId'>;

export async function approvalEvent(em: EntityManager, a: ApprovalEntry, type: 'approval.requested' | 'approval.decided', actor: Actor): Promise<void> {
  await appendRoomEvent(em, { id: a.roomId, organizationId: a.organizationId, productId: a.productId }, {
    type, visibility: 'internal', audience: a.requesterPrincipalId, actor, data: { approvalId: a.id, kind: a.kind, status: a.status, subjectId: a.subjectId },
  });
}

export function lockApproval(em: EntityManager, approvalId: string) {
  return em.getRepository(RoomApproval).createQueryBuilder('a').setLock('pessimistic_write').where('a.id = :approvalId', { approvalId }).getOne();
}

/**
 * Archiving, first: locks every approval of the room still pending that no run holds (knowledge,
 * promise, appeal), as a decision does before it writes to the room row. `cancelApprovals` then
 * cancels them, after the runs (whose own approvals go with them), so nothing they hold happens later.
 */
export async function lockPendingApprovals(em: EntityManager, roomId: string): Promise<string[]> {
  const rows: Array<{ id: string }> = await em.query(
    `SELECT id FROM room_approvals WHERE room_id = $1 AND status = 'pending' AND kind <> 'agent_action' ORDER BY id FOR UPDATE`, [roomId]);
  return rows.map((r) => r.id);
}

export async function cancelApprovals(em: EntityManager, ids: string[], actor: Actor): Promise<void> {
  if (ids.length === 0) return;
  await em.query(`UPDATE room_approvals SET status = 'cancelled' WHERE id = ANY($1)`, [ids]);
  const cancelled = await em.getRepository(RoomApproval).createQueryBuilder('a')
    .where('a.id IN (:...ids)', { ids }).orderBy('a.id', 'ASC').getMany();
  for (const approval of cancelled) await approvalEvent(em, approval, 'approval.decided', actor);
}

export async function listApprovals(
  ds: DataSource, caller: RoomCaller & { productId: string }, filter: { status?: string; kind?: string; roomId?: string }, page: PageRequest,
) {
  const qb = ds.getRepository(RoomApproval).createQueryBuilder('a').where('a.product_id = :productId', { productId: caller.productId });
  if (caller.kind === 'end_user') qb.andWhere('a.requester_principal_id = :p', { p: caller.principalId });
  if (filter.status) qb.andWhere('a.status = :status', { status: filter.status });
  if (filter.kind) qb.andWhere('a.kind = :kind', { kind: filter.kind });
  if (filter.roomId) qb.andWhere('a.room_id = :roomId', { roomId: filter.roomId });
  return pageOf(qb, 'a', page, viewApproval);
}

/** The workspace's approvals across its products, newest first: what the console lists for a person to decide. */
export async function listWorkspaceApprovals(
  ds: DataSource, organizationId: string, filter: { status?: string; kind?: string; roomId?: string }, page: PageRequest,
) {
  const qb = ds.getRepository(RoomApproval).createQueryBuilder('a').where('a.organization_id = :organizationId', { organizationId });
  if (filter.status) qb.andWhere('a.status = :status', { status: filter.status });
  if (filter.kind) qb.andWhere('a.kind = :kind', { kind: filter.kind });
  if (filter.roomId) qb.andWhere('a.room_id = :roomId', { roomId: filter.roomId });
  return pageOf(qb, 'a', page, viewApproval);
}
