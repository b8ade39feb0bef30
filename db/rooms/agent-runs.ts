import { DataSource, EntityManager } from 'typeorm';
import { conflict, notFound } from '../../runtime/service-error';
import { RoomAgentRun, RoomApproval } from '../entities';
import { RunStatus, RunStep, TERMINAL_RUN_STATUSES } from '../entities/room-agent-run';
import { PageRequest, pageOf } from '../pagination';
import { newId } from '../rules/ids';
import { databaseNow } from '../clock';
import { enqueueWorkflowCommand } from '../workflow-commands';
import { agentRunWorkflowId } from '../../workflows/workflow-ids';
import { Actor, appendRoomEvent } from './room-log';
import { RoomCaller, actorOf, assertWritable, reachAsMember, reachRoom } from './room-access';
import { approvalEvent, lockApproval } from './approvals';
import { hasActiveHandoff } from './handoffs';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function viewRun(run: RoomAgentRun) {
  return {
    id: run.id,
    roomId: run.roomId,
    alias: run.alias,
    status: run.status,
    visibility: run.visibility,
    input: run.input,
    startedBy: { type: run.startedByType, id: run.startedById },
    steps: run.steps,
    sideEffect: run.sideEffect,
    lastError: run.lastError,
    workflowId: agentRunWorkflowId(run.id),
    createdAt: run.createdAt.toISOString(),
    startedAt: iso(run.startedAt),
    completedAt: iso(run.completedAt),
    cancelledAt: iso(run.cancelledAt),
    failedAt: iso(run.failedAt),
  };
}

export async function runEvent(em: EntityManager, run: RoomAgentRun, actor: Actor): Promise<void> {
  // The run carries its room's tenant, so the room row is not read again for each event.
  await appendRoomEvent(em, { id: run.roomId, organizationId: run.organizationId, productId: run.productId }, {
    type: 'run.updated', visibility: 'internal', audience: run.starterPrincipalId, actor, data: { runId: run.id, alias: run.alias, status: run.status },
  });
}

/** `now` is the transaction's database clock (databaseNow), which stamps the run and its steps. */
export async function saveRun(em: EntityManager, run: RoomAgentRun, now: Date): Promise<void> {
  run.updatedAt = now;
  await em.getRepository(RoomAgentRun).save(run);
}

export function closeStep(run: RoomAgentRun, now: Date, type: RunStep['type'], status: RunStep['status'], extra: Partial<RunStep> = {}): void {
  const at = now.toISOString();
  const open = [...run.steps].reverse().find((s) => s.type === type && s.status === 'in_progress');
  if (open) Object.assign(open, { status, completedAt: at, ...extra });
  else run.steps = [...run.steps, { type, status, startedAt: at, completedAt: at, ...extra }];
}

export function openStep(run: RoomAgentRun, now: Date, type: RunStep['type'], extra: Partial<RunStep> = {}): void {
  run.steps = [...run.steps, { type, status: 'in_progress', ...extra, startedAt: now.toISOString(), completedAt: null }];
}

export function lockRun(em: EntityManager, runId: string) {
  return em.getRepository(RoomAgentRun).createQueryBuilder('r').setLock('pessimistic_write').where('r.id = :runId', { runId }).getOne();
}

interface InvokeInput {
  alias: string;
  input: string;
  visibility: 'customer' | 'internal';
}

/** Commits a queued run and asks for `agent-run/<runId>` through the outbox in the same transaction. */
export async function invokeAgent(
  ds: DataSource, caller: RoomCaller & { productId: string }, roomId: string, body: InvokeInput, approvalTtlMs: number,
  /** Throws when no provider would take the run: checked after every refusal about the room and the agent. */
  assertProvider: () => void,
) {
  return ds.transaction(async (em) => {
    const { room } = await (caller.kind === 'end_user' ? reachAsMember(em, caller, roomId, true) : reachRoom(em, caller, roomId, true));
    const agent = await em.query(`SELECT 1 FROM room_members WHERE room_id = $1 AND type = 'agent' AND alias = $2`, [roomId, body.alias]);
    if (agent.length === 0) throw notFound('agent');
    assertWritable(room);
    if (await hasActiveHandoff(em, roomId)) throw conflict('a handoff to a person is active: the agents take no requests until it ends');
    assertProvider();
    const id = newId('run');
    const starter = caller.kind === 'end_user'
      ? { type: 'end_user', id: caller.endUserId, principalId: caller.principalId }
      : { type: 'key', id: (caller as { keyId: string }).keyId, principalId: null };
    await em.query(
      `INSERT INTO room_agent_runs (id, room_id, organization_id, product_id, alias, status, visibility, input, started_by_type,
         started_by_id, starter_principal_id) VALUES ($1, $2, $3, $4, $5, 'queued', $6, $7, $8, $9, $10)`,
      [id, roomId, room.organizationId, room.productId, body.alias, body.visibility, body.input, starter.type, starter.id, starter.principalId]);
    const run = await em.getRepository(RoomAgentRun).findOneByOrFail({ id });
    await runEvent(em, run, actorOf(caller));
    await enqueueWorkflowCommand(em, {
      type: 'room.agent_run.start', tenant: { organizationId: room.organizationId, productId: room.productId }, runId: id, approvalTtlMs,
    });
    return viewRun(run);
  });
}

/** A run this caller may see: the product's for a key; only its own for an end user (others are 404 alike). */
async function reachRun(em: EntityManager | DataSource, caller: RoomCaller & { productId: string }, runId: string): Promise<RoomAgentRun> {
  const run = await em.getRepository(RoomAgentRun).findOneBy({ id: runId, productId: caller.productId });
  if (!run) throw notFound('agent run');
  if (caller.kind === 'end_user' && run.starterPrincipalId !== caller.principalId) throw notFound('agent run');
  return run;
}

export async function getRun(ds: DataSource, caller: RoomCaller & { productId: string }, runId: string) {
  return viewRun(await reachRun(ds, caller, runId));
}

export async function listRuns(ds: DataSource, caller: RoomCaller & { productId: string }, roomId: string, status: RunStatus | undefined, page: PageRequest) {
  await reachAsMember(ds, caller, roomId);
  const qb = ds.getRepository(RoomAgentRun).createQueryBuilder('run').where('run.room_id = :roomId', { roomId });
  if (caller.kind === 'end_user') qb.andWhere('run.starter_principal_id = :p', { p: caller.principalId });
  if (status) qb.andWhere('run.status = :status', { status });
  return pageOf(qb, 'run', page, viewRun);
}

/**
 * Cancels one locked, non-terminal run and its pending approval (run row first, then the approval:
 * the order the side effect and the decisions lock in), and wakes its workflow.
 */
async function cancelLockedRun(em: EntityManager, run: RoomAgentRun, actor: Actor): Promise<void> {
  const approvalId = run.sideEffect?.approvalId;
  const approval = approvalId ? await lockApproval(em, approvalId) : null;
  const now = await databaseNow(em);
  run.status = 'cancelled';
  run.cancelledAt = now;
  for (const step of run.steps) {
    if (step.status === 'in_progress') Object.assign(step, { status: 'cancelled', completedAt: now.toISOString() });
  }
  await saveRun(em, run, now);
  await runEvent(em, run, actor);
  if (approval?.status === 'pending') {
    approval.status = 'cancelled';
    await em.getRepository(RoomApproval).save(approval);
    await approvalEvent(em, approval, 'approval.decided', actor);
  }
  await enqueueWorkflowCommand(em, { type: 'room.agent_run.wake', runId: run.id });
}

export async function cancelRun(ds: DataSource, caller: RoomCaller & { productId: string }, runId: string) {
  return ds.transaction(async (em) => {
    await reachRun(em, caller, runId);
    const run = (await lockRun(em, runId))!;
    if (run.status === 'cancelled') return viewRun(run);
    if (run.status === 'succeeded' || run.status === 'failed') throw conflict(`the run already ${run.status}`);
    await cancelLockedRun(em, run, actorOf(caller));
    return viewRun(run);
  });
}

/** Archiving a room and removing a member cancel the runs concerned, each as a cancel would. */
export async function cancelRunsWhere(em: EntityManager, where: { roomId: string; starterPrincipalId?: string }, actor: Actor): Promise<void> {
  const qb = em.getRepository(RoomAgentRun).createQueryBuilder('r').setLock('pessimistic_write')
    .where('r.room_id = :roomId AND r.status NOT IN (:...terminal)', { roomId: where.roomId, terminal: TERMINAL_RUN_STATUSES })
    .orderBy('r.id', 'ASC');
  if (where.starterPrincipalId) qb.andWhere('r.starter_principal_id = :p', { p: where.starterPrincipalId });
  for (const run of await qb.getMany()) await cancelLockedRun(em, run, actor);
}

/** A person's decision on the approval a run awaits: the run goes on, or fails, and its workflow wakes. */
export async function decideRunApproval(
  em: EntityManager, run: RoomAgentRun, approvalId: string, decision: 'approved' | 'rejected', actor: Actor,
): Promise<void> {
  if (run.status !== 'awaiting_approval') return;
  const now = await databaseNow(em);
  closeStep(run, now, 'approval', decision === 'approved' ? 'completed' : 'failed', { approvalId });
  if (decision === 'approved') {
    run.status = 'running';
  } else {
    run.status = 'failed';
    run.failedAt = now;
    run.lastError = { code: 'APPROVAL_REJECTED', message: 'a teammate rejected the action' };
  }
  await saveRun(em, run, now);
  await runEvent(em, run, actor);
  await enqueueWorkflowCommand(em, { type: 'room.agent_run.wake', runId: run.id });
}
