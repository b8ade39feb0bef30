import { DataSource } from 'typeorm';
import { Room, RoomAgentRun, RoomApproval, RoomMessage } from '../entities';
import { RunStatus, TERMINAL_RUN_STATUSES } from '../entities/room-agent-run';
import { AgentAlias, principalIdOf, sideEffectOf } from '../rules/room-rules';
import { SYSTEM, appendRoomEvent } from './room-log';
import { insertMessage } from './room-access';
import { approvalEvent, lockApproval, requestApproval } from './approvals';
import { closeStep, lockRun, openStep, runEvent, saveRun } from './agent-runs';
import { writeCanvas } from './canvas';
import { databaseNow } from '../clock';

// The steps of `agent-run/<runId>`, each one transaction, safe to repeat.

/** queued → running; false when the run is no longer queued (cancelled before it began). */
export async function beginRun(ds: DataSource, runId: string): Promise<boolean> {
  return ds.transaction(async (em) => {
    const run = (await lockRun(em, runId))!;
    if (run.status === 'running' && run.steps.length > 0) return true;
    if (run.status !== 'queued') return false;
    const now = await databaseNow(em);
    run.status = 'running';
    run.startedAt = now;
    openStep(run, now, 'model_call');
    await saveRun(em, run, now);
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
  if (run.startedByType === 'end_user') qb.andWhere(`m.visibility = 'customer' AND (NOT m.hidden OR m.author_principal_id = :p)`,
    { p: run.starterPrincipalId });
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
    const now = await databaseNow(em);
    closeStep(run, now, 'model_call', 'failed');
    run.status = 'failed';
    run.failedAt = now;
    run.lastError = { code, message };
    await saveRun(em, run, now);
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
    const now = await databaseNow(em);
    closeStep(run, now, 'model_call', 'completed');
    run.output = output;
    run.baseCanvasVersion = baseCanvasVersion;
    run.sideEffect = { action, approvalId: null, executedAt: null, resultId: null };
    if (!needsApproval) {
      await saveRun(em, run, now);
      return 'execute';
    }
    const approvalId = await requestApproval(em, { id: run.roomId, organizationId: run.organizationId, productId: run.productId }, {
      kind: 'agent_action', subjectId: run.id, action: { type: action, preview: output.slice(0, 500) },
      requestedBy: { type: run.startedByType, id: run.startedById }, requesterPrincipalId: run.starterPrincipalId, ttlMs: approvalTtlMs,
    }, SYSTEM);
    run.sideEffect = { ...run.sideEffect, approvalId };
    run.status = 'awaiting_approval';
    openStep(run, now, 'approval', { approvalId });
    await saveRun(em, run, now);
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
    const now = await databaseNow(em);
    if (run.status === 'awaiting_approval' && expire && approval?.status === 'pending') {
      approval.status = 'expired';
      await em.getRepository(RoomApproval).save(approval);
      await approvalEvent(em, approval, 'approval.decided', SYSTEM);
      closeStep(run, now, 'approval', 'failed', { approvalId: approval.id });
      Object.assign(run, { status: 'failed', failedAt: now, lastError: { code: 'APPROVAL_EXPIRED', message: 'nobody decided in time' } });
      await saveRun(em, run, now);
      await runEvent(em, run, SYSTEM);
      return run.status;
    }
    const allowed = run.status === 'running' && effect !== null && effect.executedAt === null && (approval === null || approval.status === 'approved');
    if (!allowed) {
      if (effect && effect.executedAt === null && run.status === 'cancelled' && !run.steps.some((s) => s.type === 'side_effect')) {
        closeStep(run, now, 'side_effect', 'skipped');
        await saveRun(em, run, now);
      }
      return run.status;
    }
    const room = await em.getRepository(Room).createQueryBuilder('r').setLock('pessimistic_write').where('r.id = :id', { id: run.roomId }).getOneOrFail();
    const agent = { type: 'agent' as const, id: principalIdOf(room.productId, 'agent', run.alias) };
    let resultId: string;
    if (effect.action === 'post_message') {
      resultId = await insertMessage(em, room, { type: 'agent', principalId: agent.id }, agent,
        { body: run.output!, kind: 'text', visibility: run.visibility });
    } else {
      if (room.canvasVersion !== run.baseCanvasVersion) {
        closeStep(run, now, 'side_effect', 'failed');
        Object.assign(run, { status: 'failed', failedAt: now, lastError: { code: 'CANVAS_CONFLICT', message: 'the canvas changed since the model read it' } });
        await saveRun(em, run, now);
        await runEvent(em, run, SYSTEM);
        return run.status;
      }
      resultId = String(await writeCanvas(em, room, run.output!, agent));
    }
    run.sideEffect = { ...effect, executedAt: now.toISOString(), resultId };
    closeStep(run, now, 'side_effect', 'completed', { resultId });
    Object.assign(run, { status: 'succeeded', completedAt: now });
    await saveRun(em, run, now);
    await appendRoomEvent(em, room, {
      type: 'room.agent.action_executed', visibility: 'internal', audience: run.starterPrincipalId, actor: agent,
      data: { runId: run.id, alias: run.alias, action: effect.action, resultId },
    });
    await runEvent(em, run, agent);
    return run.status;
  });
}
