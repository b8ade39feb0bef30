import { DataSource, EntityManager } from 'typeorm';
import { RoomApproval, RoomPromise } from '../entities';
import { enqueueWorkflowCommand } from '../workflow-commands';
import { Actor, SYSTEM, appendRoomEvent } from './room-log';
import { databaseNow } from '../clock';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

function viewPromise(p: RoomPromise) {
  return {
    id: p.id,
    roomId: p.roomId,
    text: p.text,
    dueAt: p.dueAt.toISOString(),
    state: p.state,
    approvalId: p.approvalId,
    approvedAt: iso(p.approvedAt),
    completedAt: iso(p.completedAt),
    missedAt: iso(p.missedAt),
  };
}

function lockPromise(em: EntityManager, promiseId: string) {
  return em.getRepository(RoomPromise).createQueryBuilder('p').setLock('pessimistic_write').where('p.id = :promiseId', { promiseId }).getOne();
}

const tenantOf = (p: RoomPromise) => ({ id: p.roomId, organizationId: p.organizationId, productId: p.productId });

/**
 * A person's decision on a `promise` approval (docs/rooms.md#agent-runs-and-approvals), inside the decision's transaction, after
 * the approval is locked: approved → `active`, `room.promise.approved`, and `room-promise/<id>` asked for
 * through the outbox to watch the due date; rejected → `rejected`.
 */
export async function decidePromiseApproval(
  em: EntityManager, approval: RoomApproval, decision: 'approved' | 'rejected', actor: Actor,
): Promise<void> {
  const promise = await lockPromise(em, approval.subjectId);
  if (!promise || promise.state !== 'pending_approval') return;
  if (decision === 'rejected') {
    promise.state = 'rejected';
    await em.getRepository(RoomPromise).save(promise);
    await appendRoomEvent(em, tenantOf(promise), {
      type: 'promise.rejected', visibility: 'internal', actor, data: { promiseId: promise.id, approvalId: approval.id },
    });
    return;
  }
  promise.state = 'active';
  promise.approvedAt = await databaseNow(em);
  await em.getRepository(RoomPromise).save(promise);
  const dueAt = promise.dueAt.toISOString();
  await appendRoomEvent(em, tenantOf(promise), {
    type: 'room.promise.approved', visibility: 'customer', actor, data: { promiseId: promise.id, dueAt },
  });
  await enqueueWorkflowCommand(em, {
    type: 'room.promise.watch', tenant: { organizationId: promise.organizationId, productId: promise.productId }, promiseId: promise.id, dueAt,
  });
}

/** `complete_promise`'s effect, in the job's transaction; false when the promise is no longer active. */
export async function completePromise(em: EntityManager, promiseId: string, actor: Actor): Promise<boolean> {
  const promise = await lockPromise(em, promiseId);
  if (!promise || promise.state !== 'active') return false;
  promise.state = 'completed';
  promise.completedAt = await databaseNow(em);
  await em.getRepository(RoomPromise).save(promise);
  await appendRoomEvent(em, tenantOf(promise), { type: 'room.promise.completed', visibility: 'customer', actor, data: { promiseId } });
  // The watch ends now rather than at the due date; were the signal lost, it would still find the promise completed.
  await enqueueWorkflowCommand(em, { type: 'room.promise.settled', promiseId });
  return true;
}

/** The due date passed: `missed` if still active (a completion that committed first wins). Safe to repeat. */
export async function missPromise(ds: DataSource, promiseId: string): Promise<RoomPromise['state']> {
  return ds.transaction(async (em) => {
    // The room row first, then the promise: the order a complete_promise job locks them in.
    const { roomId } = await em.getRepository(RoomPromise).findOneByOrFail({ id: promiseId });
    await em.query('SELECT 1 FROM rooms WHERE id = $1 FOR UPDATE', [roomId]);
    const promise = (await lockPromise(em, promiseId))!;
    if (promise.state !== 'active') return promise.state;
    promise.state = 'missed';
    promise.missedAt = await databaseNow(em);
    await em.getRepository(RoomPromise).save(promise);
    await appendRoomEvent(em, tenantOf(promise), {
      type: 'room.promise.missed', visibility: 'customer', actor: SYSTEM,
      data: { promiseId, dueAt: promise.dueAt.toISOString() },
    });
    return promise.state;
  });
}

/** How many promises a snapshot or a catch-up lists at most: the newest ones. */
const PROMISES_LISTED = 50;

/** The promises a snapshot shows: active, completed and missed, the newest PROMISES_LISTED, oldest first. */
export async function visiblePromises(em: EntityManager | DataSource, roomId: string) {
  const rows = await em.getRepository(RoomPromise).createQueryBuilder('p')
    .where(`p.room_id = :roomId AND p.state IN ('active', 'completed', 'missed')`, { roomId })
    .orderBy('p.created_at', 'DESC').addOrderBy('p.id', 'DESC').take(PROMISES_LISTED).getMany();
  return rows.reverse().map(viewPromise);
}

/** Promises with a customer-visible change after `seq` (catch-up): the newest PROMISES_LISTED, oldest first. */
export async function promisesChangedAfter(em: EntityManager, roomId: string, seq: number) {
  const ids: Array<{ id: string }> = await em.query(
    `SELECT data->>'promiseId' AS id FROM room_events
      WHERE room_id = $1 AND seq > $2 AND type IN ('room.promise.approved', 'room.promise.completed', 'room.promise.missed')
      GROUP BY 1 ORDER BY max(seq) DESC LIMIT $3`,
    [roomId, seq, PROMISES_LISTED]);
  if (ids.length === 0) return [];
  const rows = await em.getRepository(RoomPromise).createQueryBuilder('p')
    .where('p.id IN (:...ids)', { ids: ids.map((r) => r.id) }).orderBy('p.created_at', 'ASC').addOrderBy('p.id', 'ASC').getMany();
  return rows.map(viewPromise);
}
