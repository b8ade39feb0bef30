import { DataSource, EntityManager } from 'typeorm';
import { conflict, notFound } from '../../runtime/service-error';
import { Room, RoomAgentRun, RoomApproval, RoomMessage } from '../entities';
import { RunStatus, RunStep, TERMINAL_RUN_STATUSES } from '../entities/room-agent-run';
import { PageRequest, pageOf } from '../pagination';
import { newId } from '../rules/ids';
import { AgentAlias, principalIdOf, sideEffectOf } from '../rules/room-rules';
import { enqueueWorkflowCommand } from '../workflow-commands';
import { Actor, SYSTEM, appendRoomEvent } from './room-log';
import type { RoomCaller } from './rooms';
import { actorOf, assertWritable, insertMessage, reachAsMember, reachRoom } from './rooms';
import { writeCanvas } from './canvas';
import { hasActiveHandoff } from './handoffs';
import { decidePromiseApproval } from './promises';
import { decideAppeal } from './moderation';

export const agentRunWorkflowId = (runId: string) => `agent-run/${runId}`;

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


async function runEvent(em: EntityManager, run: RoomAgentRun, actor: Actor): Promise<void> {
  // The run carries its room's tenant, so the room row is not read again for each event.
  await appendRoomEvent(em, { id: run.roomId, organizationId: run.organizationId, productId: run.productId }, {
    type: 'run.updated', visibility: 'internal', audience: run.starterPrincipalId, actor, data: { runId: run.id, alias: run.alias, status: run.status },
  });
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

async function approvalEvent(em: EntityManager, a: ApprovalEntry, type: 'approval.requested' | 'approval.decided', actor: Actor): Promise<void> {
  await appendRoomEvent(em, { id: a.roomId, organizationId: a.organizationId, productId: a.productId }, {
    type, visibility: 'internal', audience: a.requesterPrincipalId, actor, data: { approvalId: a.id, kind: a.kind, status: a.status, subjectId: a.subjectId },
  });
}

async function saveRun(em: EntityManager, run: RoomAgentRun): Promise<void> {
  run.updatedAt = new Date();
  await em.getRepository(RoomAgentRun).save(run);
}

function closeStep(run: RoomAgentRun, type: RunStep['type'], status: RunStep['status'], extra: Partial<RunStep> = {}): void {
  const now = new Date().toISOString();
  const open = [...run.steps].reverse().find((s) => s.type === type && s.status === 'in_progress');
  if (open) Object.assign(open, { status, completedAt: now, ...extra });
  else run.steps = [...run.steps, { type, status, startedAt: now, completedAt: now, ...extra }];
}

function openStep(run: RoomAgentRun, type: RunStep['type'], extra: Partial<RunStep> = {}): void {
  run.steps = [...run.steps, { type, status: 'in_progress', ...extra, startedAt: new Date().toISOString(), completedAt: null }];
}

function lockRun(em: EntityManager, runId: string) {
  return em.getRepository(RoomAgentRun).createQueryBuilder('r').setLock('pessimistic_write').where('r.id = :runId', { runId }).getOne();
}

function lockApproval(em: EntityManager, approvalId: string) {
  return em.getRepository(RoomApproval).createQueryBuilder('a').setLock('pessimistic_write').where('a.id = :approvalId', { approvalId }).getOne();
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
  run.status = 'cancelled';
  run.cancelledAt = new Date();
  for (const step of run.steps) {
    if (step.status === 'in_progress') Object.assign(step, { status: 'cancelled', completedAt: new Date().toISOString() });
  }
  await saveRun(em, run);
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
    Object.assign(approval, { status: decision, decidedByTeammateId: teammate.teammateId, decidedAt: new Date(), note });
    await em.getRepository(RoomApproval).save(approval);
    await approvalEvent(em, approval, 'approval.decided', actor);
    if (run && run.status === 'awaiting_approval') {
      closeStep(run, 'approval', decision === 'approved' ? 'completed' : 'failed', { approvalId });
      if (decision === 'approved') {
        run.status = 'running';
      } else {
        run.status = 'failed';
        run.failedAt = new Date();
        run.lastError = { code: 'APPROVAL_REJECTED', message: 'a teammate rejected the action' };
      }
      await saveRun(em, run);
      await runEvent(em, run, actor);
      await enqueueWorkflowCommand(em, { type: 'room.agent_run.wake', runId: run.id });
    }
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

// ---- Steps of `agent-run/<runId>`, each one transaction, safe to repeat ----

/** queued → running; false when the run is no longer queued (cancelled before it began). */
export async function beginRun(ds: DataSource, runId: string): Promise<boolean> {
  return ds.transaction(async (em) => {
    const run = (await lockRun(em, runId))!;
    if (run.status === 'running' && run.steps.length > 0) return true;
    if (run.status !== 'queued') return false;
    run.status = 'running';
    run.startedAt = new Date();
    openStep(run, 'model_call');
    await saveRun(em, run);
    await runEvent(em, run, SYSTEM);
    return true;
  });
}

interface AgentContext {
  alias: AgentAlias;
  input: string;
  messages: Array<{ id: string; author: string; body: string }>;
  canvas: { version: number; content: string };
}

/** What the model is shown: the last 50 messages visible to the starter, and the canvas. */
export async function agentContext(ds: DataSource, runId: string): Promise<AgentContext> {
  const run = await ds.getRepository(RoomAgentRun).findOneByOrFail({ id: runId });
  const room = await ds.getRepository(Room).findOneByOrFail({ id: run.roomId });
  const qb = ds.getRepository(RoomMessage).createQueryBuilder('m')
    .where('m.room_id = :roomId AND m.deleted_at IS NULL', { roomId: run.roomId });
  if (run.startedByType === 'end_user') qb.andWhere(`m.visibility = 'customer' AND (NOT m.hidden OR m.author_principal_id = :p)`, { p: run.starterPrincipalId });
  const messages = (await qb.orderBy('m.seq', 'DESC').take(50).getMany()).reverse();
  const canvas: Array<{ content: string }> = await ds.query(
    'SELECT content FROM room_canvas_versions WHERE room_id = $1 AND version = $2', [room.id, room.canvasVersion]);
  return {
    alias: run.alias,
    input: run.input,
    messages: messages.map((m) => ({ id: m.id, author: m.authorType, body: m.hidden ? '' : m.body })),
    canvas: { version: room.canvasVersion, content: canvas[0]?.content ?? '' },
  };
}

export async function failRun(ds: DataSource, runId: string, code: string, message: string): Promise<void> {
  await ds.transaction(async (em) => {
    const run = (await lockRun(em, runId))!;
    if (TERMINAL_RUN_STATUSES.includes(run.status)) return;
    closeStep(run, 'model_call', 'failed');
    run.status = 'failed';
    run.failedAt = new Date();
    run.lastError = { code, message };
    await saveRun(em, run);
    await runEvent(em, run, SYSTEM);
  });
}

type Proposal = 'execute' | 'await_approval' | 'stopped';

/** Keeps the model's answer and either asks a person (an `agent_action` approval) or goes on to the effect. */
export async function proposeEffect(ds: DataSource, runId: string, output: string, baseCanvasVersion: number, approvalTtlMs: number): Promise<Proposal> {
  return ds.transaction(async (em) => {
    const run = (await lockRun(em, runId))!;
    if (run.status === 'awaiting_approval') return 'await_approval';
    if (run.status !== 'running') return 'stopped';
    // A repeat after the answer was kept: the approval (if any) was decided, or none was needed.
    if (run.output !== null) return 'execute';
    const { action, needsApproval } = sideEffectOf(run.alias, run.visibility);
    closeStep(run, 'model_call', 'completed');
    run.output = output;
    run.baseCanvasVersion = baseCanvasVersion;
    run.sideEffect = { action, approvalId: null, executedAt: null, resultId: null };
    if (!needsApproval) {
      await saveRun(em, run);
      return 'execute';
    }
    const approvalId = await requestApproval(em, { id: run.roomId, organizationId: run.organizationId, productId: run.productId }, {
      kind: 'agent_action', subjectId: run.id, action: { type: action, preview: output.slice(0, 500) },
      requestedBy: { type: run.startedByType, id: run.startedById }, requesterPrincipalId: run.starterPrincipalId, ttlMs: approvalTtlMs,
    }, SYSTEM);
    run.sideEffect = { ...run.sideEffect, approvalId };
    run.status = 'awaiting_approval';
    openStep(run, 'approval', { approvalId });
    await saveRun(em, run);
    await runEvent(em, run, SYSTEM);
    return 'await_approval';
  });
}

/**
 * The side effect, in one transaction under the run row's lock (then its approval's): written only
 * while the run is `running`, its approval (if any) `approved` and nothing executed yet; otherwise
 * nothing is written. A cancel holds the same lock, so one of the two commits first and the other sees it.
 * `expire` (the approval's time ran out) turns a still-pending approval into `expired` and fails the run.
 */
export async function executeEffect(ds: DataSource, runId: string, expire: boolean): Promise<RunStatus> {
  return ds.transaction(async (em) => {
    const run = (await lockRun(em, runId))!;
    const effect = run.sideEffect;
    const approval = effect?.approvalId ? await lockApproval(em, effect.approvalId) : null;
    if (run.status === 'awaiting_approval' && expire && approval?.status === 'pending') {
      approval.status = 'expired';
      await em.getRepository(RoomApproval).save(approval);
      await approvalEvent(em, approval, 'approval.decided', SYSTEM);
      closeStep(run, 'approval', 'failed', { approvalId: approval.id });
      Object.assign(run, { status: 'failed', failedAt: new Date(), lastError: { code: 'APPROVAL_EXPIRED', message: 'nobody decided in time' } });
      await saveRun(em, run);
      await runEvent(em, run, SYSTEM);
      return run.status;
    }
    const allowed = run.status === 'running' && effect !== null && effect.executedAt === null && (approval === null || approval.status === 'approved');
    if (!allowed) {
      if (effect && effect.executedAt === null && run.status === 'cancelled' && !run.steps.some((s) => s.type === 'side_effect')) {
        closeStep(run, 'side_effect', 'skipped');
        await saveRun(em, run);
      }
      return run.status;
    }
    const room = await em.getRepository(Room).createQueryBuilder('r').setLock('pessimistic_write').where('r.id = :id', { id: run.roomId }).getOneOrFail();
    const agent = { type: 'agent' as const, id: principalIdOf(room.productId, 'agent', run.alias) };
    let resultId: string;
    if (effect.action === 'post_message') {
      resultId = await insertMessage(em, room, { type: 'agent', principalId: agent.id }, agent, { body: run.output!, kind: 'text', visibility: run.visibility });
    } else {
      if (room.canvasVersion !== run.baseCanvasVersion) {
        closeStep(run, 'side_effect', 'failed');
        Object.assign(run, { status: 'failed', failedAt: new Date(), lastError: { code: 'CANVAS_CONFLICT', message: 'the canvas changed since the model read it' } });
        await saveRun(em, run);
        await runEvent(em, run, SYSTEM);
        return run.status;
      }
      resultId = String(await writeCanvas(em, room, run.output!, agent));
    }
    const executedAt = new Date().toISOString();
    run.sideEffect = { ...effect, executedAt, resultId };
    closeStep(run, 'side_effect', 'completed', { resultId });
    Object.assign(run, { status: 'succeeded', completedAt: new Date() });
    await saveRun(em, run);
    await appendRoomEvent(em, room, {
      type: 'room.agent.action_executed', visibility: 'internal', audience: run.starterPrincipalId, actor: agent,
      data: { runId: run.id, alias: run.alias, action: effect.action, resultId },
    });
    await runEvent(em, run, agent);
    return run.status;
  });
}

