import { DataSource, EntityManager } from 'typeorm';
import { conflict, notFound, validationFailed } from '../../runtime/service-error';
import { Room, RoomJob, RoomPromise, RoomSolveSession } from '../entities';
import { JobStatus } from '../entities/room-job';
import { fanOutInboxItems } from '../customer-loop/inbox';
import { newId } from '../rules/ids';
import { enqueueWorkflowCommand } from '../workflow-commands';
import { requestApproval } from './approvals';
import { completePromise } from './promises';
import { Actor, SYSTEM, appendRoomEvent } from './room-log';
import type { RoomCaller } from './room-access';
import { actorOf, assertWritable, reachRoom } from './room-access';
import { endSolveSession, openSolveSession } from './solve-sessions';
import { databaseNow } from '../clock';

type KeyCaller = Extract<RoomCaller, { kind: 'key' }>;

/** The params of each job type once the route checked their shape (docs/rooms.md#jobs-promises-solve-sessions-and-handoff). */
export type JobParams =
  | { type: 'send_release_receipts'; params: { releaseId: string } }
  | { type: 'make_promise'; params: { text: string; dueAt: string } }
  | { type: 'complete_promise'; params: { promiseId: string } }
  | { type: 'open_solve_session'; params: { termsVersion: string; termsText: string } }
  | { type: 'end_solve_session'; params: { sessionId: string } };

function viewJob(job: RoomJob) {
  return {
    id: job.id,
    roomId: job.roomId,
    type: job.type,
    params: job.params,
    status: job.status,
    result: job.result,
    error: job.error,
    createdAt: job.createdAt.toISOString(),
    completedAt: job.completedAt ? job.completedAt.toISOString() : null,
  };
}

async function jobEvent(em: EntityManager, job: RoomJob, actor: Actor): Promise<void> {
  await appendRoomEvent(em, { id: job.roomId, organizationId: job.organizationId, productId: job.productId }, {
    type: 'job.updated', visibility: 'internal', actor, data: { jobId: job.id, type: job.type, status: job.status },
  });
}

/** What the job names must exist in this room (else 400 at its path) and be in the state the job needs (else 409). */
async function checkSubjects(em: EntityManager, room: Room, job: JobParams): Promise<void> {
  if (job.type === 'send_release_receipts') {
    const release = await em.query('SELECT 1 FROM releases WHERE id = $1 AND product_id = $2', [job.params.releaseId, room.productId]);
    if (release.length === 0) throw validationFailed([{ path: 'params.releaseId', message: 'is not a published release of this product' }]);
  } else if (job.type === 'complete_promise') {
    const promise = await em.getRepository(RoomPromise).findOneBy({ id: job.params.promiseId, roomId: room.id });
    if (!promise) throw validationFailed([{ path: 'params.promiseId', message: 'is not a promise of this room' }]);
    if (promise.state !== 'active') throw conflict(`the promise is ${promise.state}, not active`);
  } else if (job.type === 'end_solve_session') {
    const session = await em.getRepository(RoomSolveSession).findOneBy({ id: job.params.sessionId, roomId: room.id });
    if (!session) throw validationFailed([{ path: 'params.sessionId', message: 'is not a solve session of this room' }]);
    if (session.state !== 'open') throw conflict('the solve session has ended');
  }
}

/** Commits a queued job and asks for `room-job/<jobId>` through the outbox in the same transaction. */
export async function createJob(ds: DataSource, caller: KeyCaller, roomId: string, input: JobParams) {
  return ds.transaction(async (em) => {
    const { room } = await reachRoom(em, caller, roomId, true);
    assertWritable(room);
    await checkSubjects(em, room, input);
    const id = newId('job');
    await em.query(
      `INSERT INTO room_jobs (id, room_id, organization_id, product_id, type, params, status, created_by_type, created_by_id)
       VALUES ($1, $2, $3, $4, $5, $6, 'queued', 'key', $7)`,
      [id, roomId, room.organizationId, room.productId, input.type, JSON.stringify(input.params), caller.keyId]);
    const job = await em.getRepository(RoomJob).findOneByOrFail({ id });
    await jobEvent(em, job, actorOf(caller));
    await enqueueWorkflowCommand(em, { type: 'room.job.start', tenant: { organizationId: room.organizationId, productId: room.productId }, jobId: id });
    return viewJob(job);
  });
}

export async function getJob(ds: DataSource, caller: KeyCaller, roomId: string, jobId: string) {
  await reachRoom(ds, caller, roomId);
  const job = await ds.getRepository(RoomJob).findOneBy({ id: jobId, roomId });
  if (!job) throw notFound('job');
  return viewJob(job);
}

function lockJob(em: EntityManager, jobId: string) {
  return em.getRepository(RoomJob).createQueryBuilder('j').setLock('pessimistic_write').where('j.id = :jobId', { jobId }).getOne();
}

// ---- Steps of `room-job/<jobId>`, each one transaction, safe to repeat ----

/** queued → running; a job already past queued is left as it is. */
export async function beginJob(ds: DataSource, jobId: string): Promise<JobStatus> {
  return ds.transaction(async (em) => {
    const job = (await lockJob(em, jobId))!;
    if (job.status !== 'queued') return job.status;
    job.status = 'running';
    job.startedAt = await databaseNow(em);
    await em.getRepository(RoomJob).save(job);
    await jobEvent(em, job, SYSTEM);
    return job.status;
  });
}

type Outcome = { result: Record<string, unknown> } | { error: { code: string; message: string } };

const stale = (message: string): Outcome => ({ error: { code: 'CONFLICT', message } });

async function sendReleaseReceipts(em: EntityManager, room: Room, job: RoomJob, releaseId: string): Promise<Outcome> {
  const [release]: Array<{ title: string }> = await em.query('SELECT title FROM releases WHERE id = $1 AND product_id = $2', [releaseId, room.productId]);
  // Joined end users without this room's receipt of this release get one; the unique index on
  // (room, release, end user) makes a second send a no-op.
  const recipientCount = await fanOutInboxItems(em, {
    organizationId: room.organizationId, productId: room.productId, releaseId, roomId: room.id,
    subject: release.title, preview: 'A release discussed in one of your rooms has shipped',
  }, `SELECT end_user_id FROM room_members WHERE room_id = $4 AND type = 'end_user' AND state = 'joined'`);
  await appendRoomEvent(em, room, {
    type: 'room.release.receipt_sent', visibility: 'customer', actor: SYSTEM, data: { jobId: job.id, releaseId, recipientCount },
  });
  return { result: { recipientCount } };
}

async function makePromise(em: EntityManager, room: Room, job: RoomJob, params: { text: string; dueAt: string }): Promise<Outcome> {
  const promiseId = newId('prm');
  const approvalId = await requestApproval(em, room, {
    kind: 'promise', subjectId: promiseId, action: { type: 'make_promise', preview: params.text },
    requestedBy: { type: job.createdByType, id: job.createdById },
  }, SYSTEM);
  await em.query(
    `INSERT INTO room_promises (id, room_id, organization_id, product_id, job_id, text, due_at, state, approval_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, 'pending_approval', $8)`,
    [promiseId, room.id, room.organizationId, room.productId, job.id, params.text, params.dueAt, approvalId]);
  await appendRoomEvent(em, room, {
    type: 'promise.proposed', visibility: 'internal', actor: SYSTEM, data: { promiseId, approvalId, dueAt: new Date(params.dueAt).toISOString() },
  });
  return { result: { promiseId, approvalId } };
}

async function effectOf(em: EntityManager, room: Room, job: RoomJob): Promise<Outcome> {
  const typed = { type: job.type, params: job.params } as JobParams;
  switch (typed.type) {
    case 'send_release_receipts':
      return sendReleaseReceipts(em, room, job, typed.params.releaseId);
    case 'make_promise':
      return makePromise(em, room, job, typed.params);
    case 'complete_promise':
      return (await completePromise(em, typed.params.promiseId, SYSTEM))
        ? { result: { promiseId: typed.params.promiseId } } : stale('the promise is no longer active');
    case 'open_solve_session':
      return { result: { sessionId: await openSolveSession(em, room, job.id, { version: typed.params.termsVersion, text: typed.params.termsText }, SYSTEM) } };
    case 'end_solve_session':
      return (await endSolveSession(em, room, typed.params.sessionId, SYSTEM))
        ? { result: { sessionId: typed.params.sessionId } } : stale('the solve session is no longer open');
  }
}

/**
 * The job's effect and its outcome in one transaction under the job row's lock: a retry after the
 * commit finds the job finished and writes nothing, so the effect happens once. A subject that changed
 * since the job was accepted (a promise no longer active, an archived room) fails the job.
 */
export async function runJob(ds: DataSource, jobId: string): Promise<JobStatus> {
  return ds.transaction(async (em) => {
    const job = (await lockJob(em, jobId))!;
    if (job.status === 'succeeded' || job.status === 'failed') return job.status;
    const room = await em.getRepository(Room).createQueryBuilder('r').setLock('pessimistic_write').where('r.id = :id', { id: job.roomId }).getOneOrFail();
    const outcome = room.status === 'archived' ? stale('the room is archived') : await effectOf(em, room, job);
    if ('result' in outcome) Object.assign(job, { status: 'succeeded', result: outcome.result });
    else Object.assign(job, { status: 'failed', error: outcome.error });
    job.completedAt = await databaseNow(em);
    await em.getRepository(RoomJob).save(job);
    await jobEvent(em, job, SYSTEM);
    return job.status;
  });
}
