import { DataSource, SelectQueryBuilder } from 'typeorm';
import { notFound, validationFailed } from '../../runtime/service-error';
import { Teammate, Thread, ThreadMessage } from '../entities';
import { MessageVisibility } from '../entities/thread-message';
import { ThreadState } from '../entities/thread';
import { newId } from '../rules/ids';
import { insertInboxItem } from './inbox';
import { enqueueEvent } from '../outbox';
import { enqueueWorkflowCommand } from '../workflow-commands';
import { Page, PageRequest, pageOf } from '../pagination';
import { databaseNow } from '../clock';

export interface ThreadView {
  id: string;
  endUserId: string;
  subject: string;
  state: ThreadState;
  ownerId: string | null;
  nextUpdateAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export function viewThread(t: Thread): ThreadView {
  return {
    id: t.id,
    endUserId: t.endUserId,
    subject: t.subject,
    state: t.state,
    ownerId: t.ownerId,
    nextUpdateAt: t.nextUpdateAt ? t.nextUpdateAt.toISOString() : null,
    createdAt: t.createdAt.toISOString(),
    updatedAt: t.updatedAt.toISOString(),
  };
}

export interface MessageView {
  id: string;
  authorType: 'end_user' | 'teammate';
  body: string;
  createdAt: string;
}

function viewMessage(m: ThreadMessage): MessageView {
  return { id: m.id, authorType: m.authorType, body: m.body, createdAt: m.createdAt.toISOString() };
}

export interface ThreadFilter {
  state?: ThreadState;
  owner?: string;
  endUserId?: string;
}

export async function listThreads(ds: DataSource, productId: string, filter: ThreadFilter, page: PageRequest): Promise<Page<ThreadView>> {
  return filteredThreads(ds.getRepository(Thread).createQueryBuilder('t').where('t.product_id = :productId', { productId }), filter, page);
}

/** The workspace's threads across its products (or one of them), for the console. */
export async function listWorkspaceThreads(
  ds: DataSource, organizationId: string, filter: ThreadFilter & { productId?: string }, page: PageRequest,
): Promise<Page<ThreadView>> {
  const qb = ds.getRepository(Thread).createQueryBuilder('t').where('t.organization_id = :organizationId', { organizationId });
  if (filter.productId) qb.andWhere('t.product_id = :productId', { productId: filter.productId });
  return filteredThreads(qb, filter, page);
}

function filteredThreads(qb: SelectQueryBuilder<Thread>, filter: ThreadFilter, page: PageRequest): Promise<Page<ThreadView>> {
  if (filter.state) qb.andWhere('t.state = :state', { state: filter.state });
  if (filter.owner === 'unassigned') qb.andWhere('t.owner_id IS NULL');
  else if (filter.owner) qb.andWhere('t.owner_id = :owner', { owner: filter.owner });
  if (filter.endUserId) qb.andWhere('t.end_user_id = :endUserId', { endUserId: filter.endUserId });
  return pageOf(qb, 't', page, viewThread);
}

/** A thread with its customer-visible messages; internal notes never leave the workspace. */
export async function getThread(ds: DataSource, productId: string, id: string) {
  const thread = await ds.getRepository(Thread).findOneBy({ id, productId });
  if (!thread) throw notFound('thread');
  const messages = await ds.getRepository(ThreadMessage).find({
    where: { threadId: id, visibility: 'customer' }, order: { createdAt: 'ASC', id: 'ASC' },
  });
  return { ...viewThread(thread), messages: messages.map(viewMessage) };
}

/** The thread as the team reads it: every message, internal notes included, each with its visibility. */
export async function getTeamThread(ds: DataSource, organizationId: string, id: string) {
  const thread = await workspaceThread(ds, organizationId, id);
  const messages = await ds.getRepository(ThreadMessage).find({ where: { threadId: id }, order: { createdAt: 'ASC', id: 'ASC' } });
  return { thread, view: { ...viewThread(thread), messages: messages.map((m) => ({ ...viewMessage(m), visibility: m.visibility })) } };
}

export interface ThreadPatch {
  state?: ThreadState;
  ownerId?: string | null;
}

export async function patchThread(ds: DataSource, tenant: { organizationId: string; productId: string }, id: string, patch: ThreadPatch) {
  return ds.transaction(async (em) => {
    const thread = await em.getRepository(Thread).findOne({ where: { id, productId: tenant.productId }, lock: { mode: 'pessimistic_write' } });
    if (!thread) throw notFound('thread');
    if (patch.ownerId !== undefined && patch.ownerId !== null) {
      const teammate = await em.getRepository(Teammate).existsBy({ id: patch.ownerId, organizationId: tenant.organizationId });
      if (!teammate) throw validationFailed([{ path: 'ownerId', message: 'is not a teammate of this workspace' }]);
    }
    if (patch.state !== undefined) thread.state = patch.state;
    if (patch.ownerId !== undefined) thread.ownerId = patch.ownerId;
    thread.updatedAt = await databaseNow(em);
    await em.getRepository(Thread).update(id, { state: thread.state, ownerId: thread.ownerId, updatedAt: thread.updatedAt });
    return viewThread(thread);
  });
}

/** The same change as `patchThread`, for a thread named by a teammate of its workspace. */
export async function patchTeamThread(ds: DataSource, organizationId: string, id: string, patch: ThreadPatch) {
  const thread = await workspaceThread(ds, organizationId, id);
  return patchThread(ds, { organizationId, productId: thread.productId }, id, patch);
}

async function workspaceThread(ds: DataSource, organizationId: string, id: string): Promise<Thread> {
  const thread = await ds.getRepository(Thread).findOneBy({ id, organizationId });
  if (!thread) throw notFound('thread');
  return thread;
}

export interface TeammateMessage {
  organizationId: string;
  teammateId: string;
  body: string;
  visibility: MessageVisibility;
}

/**
 * A teammate's message. A customer-visible reply reaches the end user's inbox, answers any promised
 * update (nextUpdateAt is cleared) and emits thread.replied; an internal note does none of that.
 */
export async function addTeammateMessage(ds: DataSource, threadId: string, input: TeammateMessage) {
  const thread = await workspaceThread(ds, input.organizationId, threadId);
  return ds.transaction(async (em) => {
    const message = {
      id: newId('msg'), threadId, authorType: 'teammate' as const, authorId: input.teammateId,
      visibility: input.visibility, body: input.body, createdAt: await databaseNow(em),
    };
    await em.getRepository(ThreadMessage).insert(message);
    let hadPromise = false;
    if (input.visibility === 'customer') {
      // TypeORM answers an UPDATE as [rows, count]; the self-join reads the promise as it was.
      const [rows]: [Array<{ had: boolean }>, number] = await em.query(
        `UPDATE threads t SET next_update_at = NULL, updated_at = now()
           FROM threads old WHERE t.id = old.id AND t.id = $1 RETURNING old.next_update_at IS NOT NULL AS had`,
        [threadId],
      );
      hadPromise = rows[0]?.had ?? false;
      if (hadPromise) await enqueueWorkflowCommand(em, { type: 'thread.sla.replied', threadId });
      await insertInboxItem(em, {
        id: newId('inb'), organizationId: thread.organizationId, productId: thread.productId, endUserId: thread.endUserId,
        threadId, subject: thread.subject, preview: input.body,
      });
      await enqueueEvent(em, {
        organizationId: thread.organizationId, productId: thread.productId, type: 'thread.replied',
        data: { threadId, messageId: message.id, endUserId: thread.endUserId },
      });
    }
    return { message: { ...viewMessage(message), visibility: message.visibility }, thread, hadPromise };
  });
}

/** Sets or clears the promised next update, with the command that starts or stops its SLA workflow. */
export async function setNextUpdate(ds: DataSource, organizationId: string, threadId: string, nextUpdateAt: Date | null) {
  const thread = await workspaceThread(ds, organizationId, threadId);
  const updatedAt = await ds.transaction(async (em) => {
    const now = await databaseNow(em);
    await em.getRepository(Thread).update(threadId, { nextUpdateAt, slaEscalatedAt: null, updatedAt: now });
    await enqueueWorkflowCommand(em, {
      type: 'thread.sla.promise', tenant: { organizationId: thread.organizationId, productId: thread.productId }, threadId,
      dueAt: nextUpdateAt?.toISOString() ?? null,
    });
    return now;
  });
  return { ...thread, nextUpdateAt, slaEscalatedAt: null, updatedAt };
}

/**
 * Records an overdue promise once: only while the thread still carries the same promise and has not
 * escalated it, so a retried activity or a late timer writes nothing twice.
 */
export async function escalateThreadSla(ds: DataSource, threadId: string, dueAt: Date): Promise<boolean> {
  return ds.transaction(async (em) => {
    const [rows]: [Array<{ organization_id: string; product_id: string; end_user_id: string }>, number] = await em.query(
      `UPDATE threads SET sla_escalated_at = now()
        WHERE id = $1 AND next_update_at = $2 AND sla_escalated_at IS NULL
        RETURNING organization_id, product_id, end_user_id`,
      [threadId, dueAt],
    );
    const row = rows[0];
    if (!row) return false;
    await enqueueEvent(em, {
      organizationId: row.organization_id, productId: row.product_id, type: 'thread.sla_escalated',
      data: { threadId, endUserId: row.end_user_id, nextUpdateAt: dueAt.toISOString() },
    });
    return true;
  });
}
