import { DataSource } from 'typeorm';
import { ServiceError, validationFailed } from '../../runtime/service-error';
import { Room, RoomApproval, RoomDocument, RoomKnowledge } from '../entities';
import { EvidenceItem } from '../entities/room-document';
import { newId } from '../rules/ids';
import { RemovedReason, checkCitations, parseCompiled } from '../rules/room-rules';
import { SYSTEM, appendRoomEvent } from './room-log';
import type { RoomCaller } from './room-access';
import { actorOf, assertWritable, reachRoom } from './room-access';
import { requestApproval, viewApproval } from './approvals';
import { WorkflowCommandBody, enqueueWorkflowCommand } from '../workflow-commands';

const EVIDENCE_LIMIT = 200;

export function viewDocument(d: RoomDocument) {
  return {
    id: d.id,
    roomId: d.roomId,
    title: d.title,
    statements: d.statements,
    rejected: d.rejected,
    removedCitations: d.removedCitations,
    model: d.model ?? { provider: '', name: '' },
    createdAt: d.createdAt.toISOString(),
  };
}

export function viewKnowledge(k: RoomKnowledge) {
  return {
    id: k.id,
    roomId: k.roomId,
    title: k.title,
    body: k.body,
    documentId: k.documentId,
    sourceIds: k.sourceIds,
    state: k.state,
    approvalId: k.approvalId,
    publishedAt: k.publishedAt ? k.publishedAt.toISOString() : null,
  };
}

const citationFailed = (details: Record<string, unknown>) =>
  new ServiceError('CITATION_VALIDATION_FAILED', 'no statement kept a citation of the room\'s customer-visible evidence', details);

/**
 * The evidence of a compile (docs/rooms.md#compile-and-promote): the room's customer-visible, undeleted, unhidden messages and
 * the signals of its threads and of its features' evidence, newest 200 of each. None: 422 at once.
 */
export async function startCompile(
  ds: DataSource, caller: RoomCaller, roomId: string, input: { title: string; maxStatements: number },
  ai: Extract<WorkflowCommandBody, { type: 'room.compile.start' }>['ai'],
  /** Throws when no provider would take the run: checked after every refusal about the room itself. */
  assertProvider: () => void,
): Promise<string> {
  return ds.transaction(async (em) => {
    const { room } = await reachRoom(em, caller, roomId, true);
    assertWritable(room);
    const messages: Array<{ id: string; body: string }> = await em.query(
      `SELECT id, body FROM room_messages WHERE room_id = $1 AND visibility = 'customer' AND deleted_at IS NULL AND NOT hidden
        ORDER BY seq DESC LIMIT ${EVIDENCE_LIMIT}`, [roomId]);
    const signals: Array<{ id: string; title: string; body: string }> = await em.query(
      `SELECT s.id, s.title, s.body FROM signals s WHERE s.product_id = $1
          AND (s.thread_id = ANY($2) OR s.id IN (SELECT l.signal_id FROM feature_signal_links l WHERE l.feature_id = ANY($3)))
        ORDER BY s.created_at DESC LIMIT ${EVIDENCE_LIMIT}`, [room.productId, room.threadIds, room.featureIds]);
    const evidence: EvidenceItem[] = [
      ...messages.reverse().map((m) => ({ id: m.id, type: 'message' as const, text: m.body })),
      ...signals.map((s) => ({ id: s.id, type: 'signal' as const, text: `${s.title}\n${s.body}` })),
    ];
    if (evidence.length === 0) throw citationFailed({ rejected: [], reason: 'no customer-visible evidence in this room' });
    assertProvider();
    const id = newId('doc');
    await em.query(
      `INSERT INTO room_documents (id, room_id, organization_id, product_id, title, max_statements, status, evidence)
       VALUES ($1, $2, $3, $4, $5, $6, 'compiling', $7)`,
      [id, roomId, room.organizationId, room.productId, input.title, input.maxStatements, JSON.stringify(evidence)]);
    // The route starts the run at once and waits for it; this command only makes sure an API lost after
    // the commit leaves no document compiling without its run.
    await enqueueWorkflowCommand(em, {
      type: 'room.compile.start', tenant: { organizationId: room.organizationId, productId: room.productId }, documentId: id, ai,
    });
    return id;
  });
}

export async function compileInput(ds: DataSource, documentId: string) {
  const d = await ds.getRepository(RoomDocument).findOneByOrFail({ id: documentId });
  return { title: d.title, maxStatements: d.maxStatements, evidence: d.evidence };
}

/** Checks the model's citations against the evidence shown and records the document, or why none survived. */
export async function finishCompile(ds: DataSource, documentId: string, content: string, model: { provider: string; name: string }): Promise<string> {
  return ds.transaction(async (em) => {
    const d = await em.getRepository(RoomDocument).createQueryBuilder('d').setLock('pessimistic_write').where('d.id = :documentId', { documentId })
      .getOneOrFail();
    if (d.status !== 'compiling') return d.status;
    const answer = parseCompiled(content)!;
    const evidence = new Map(d.evidence.map((e) => [e.id, e.type]));
    const cited = [...new Set(answer.statements.flatMap((s) => s.citations))].filter((id) => !evidence.has(id));
    const reasons = new Map<string, RemovedReason>();
    if (cited.length > 0) {
      const internal: Array<{ id: string }> = await em.query(
        `SELECT id FROM room_messages WHERE room_id = $1 AND id = ANY($2) AND visibility = 'internal'`, [d.roomId, cited]);
      const existing: Array<{ id: string }> = await em.query(
        `SELECT m.id FROM room_messages m JOIN rooms r ON r.id = m.room_id WHERE r.product_id = $1 AND m.id = ANY($2)
         UNION SELECT id FROM signals WHERE product_id = $1 AND id = ANY($2)`, [d.productId, cited]);
      for (const row of existing) reasons.set(row.id, 'not_evidence');
      for (const row of internal) reasons.set(row.id, 'internal');
    }
    const checked = checkCitations(answer.statements, evidence, (id) => reasons.get(id) ?? 'unknown', d.maxStatements);
    const status = checked.statements.length > 0 ? 'compiled' : 'discarded';
    await em.getRepository(RoomDocument).update({ id: documentId }, {
      status, statements: checked.statements, rejected: checked.rejected, removedCitations: checked.removedCitations, model,
    });
    if (status === 'compiled') {
      const room = await em.getRepository(Room).findOneByOrFail({ id: d.roomId });
      await appendRoomEvent(em, room, { type: 'document.compiled', visibility: 'internal', actor: SYSTEM, data: { documentId } });
    }
    return status;
  });
}

export async function failCompile(ds: DataSource, documentId: string): Promise<void> {
  await ds.query(`UPDATE room_documents SET status = 'failed' WHERE id = $1 AND status = 'compiling'`, [documentId]);
}

/** The compile's answer from its record: the document, 422 when nothing cited survived, or 503. */
export async function compiledDocument(ds: DataSource, documentId: string) {
  const d = await ds.getRepository(RoomDocument).findOneByOrFail({ id: documentId });
  if (d.status === 'compiled') return viewDocument(d);
  if (d.status === 'discarded') throw citationFailed({ documentId, rejected: d.rejected, removedCitations: d.removedCitations });
  throw new ServiceError('AI_UNAVAILABLE', 'the AI provider failed; nothing was made up in its place', { documentId }, { 'retry-after': '30' });
}

export interface PromoteInput {
  documentId?: string;
  title?: string;
  body?: string;
  sourceMessageIds?: string[];
}

/** Proposes knowledge from a compiled document or from given text; publishing waits for a person. */
export async function promote(ds: DataSource, caller: RoomCaller & { kind: 'key' }, roomId: string, input: PromoteInput) {
  return ds.transaction(async (em) => {
    const { room } = await reachRoom(em, caller, roomId, true);
    assertWritable(room);
    let title: string;
    let body: string;
    let sourceIds: string[];
    if (input.documentId !== undefined) {
      const d = await em.getRepository(RoomDocument).findOneBy({ id: input.documentId, roomId, status: 'compiled' });
      if (!d) throw validationFailed([{ path: 'documentId', message: 'is not a compiled document of this room' }]);
      title = d.title;
      body = d.statements.map((s) => `${s.section}: ${s.text}`).join('\n');
      sourceIds = [...new Set(d.statements.flatMap((s) => s.citations.map((c) => c.id)))];
    } else {
      const wanted = [...new Set(input.sourceMessageIds ?? [])];
      if (wanted.length > 0) {
        const found: Array<{ id: string }> = await em.query(
          `SELECT id FROM room_messages WHERE room_id = $1 AND id = ANY($2) AND deleted_at IS NULL`, [roomId, wanted]);
        const known = new Set(found.map((f) => f.id));
        const issues = (input.sourceMessageIds ?? []).map((id, i) => ({ id, i })).filter(({ id }) => !known.has(id))
          .map(({ i }) => ({ path: `sourceMessageIds[${i}]`, message: 'is not a message of this room' }));
        if (issues.length > 0) throw validationFailed(issues);
      }
      title = input.title!;
      body = input.body!;
      sourceIds = wanted;
    }
    const knowledgeId = newId('kno');
    const approvalId = await requestApproval(em, room, {
      kind: 'knowledge', subjectId: knowledgeId, action: { type: 'publish_knowledge', preview: title.slice(0, 500) },
      requestedBy: { type: 'key', id: caller.keyId },
    }, actorOf(caller));
    await em.query(
      `INSERT INTO room_knowledge (id, room_id, title, body, document_id, source_ids, state, approval_id)
       VALUES ($1, $2, $3, $4, $5, $6, 'pending_approval', $7)`,
      [knowledgeId, roomId, title, body, input.documentId ?? null, sourceIds, approvalId]);
    await appendRoomEvent(em, room, {
      type: 'knowledge.proposed', visibility: 'internal', actor: actorOf(caller), data: { knowledgeId, approvalId },
    });
    return {
      knowledge: viewKnowledge(await em.getRepository(RoomKnowledge).findOneByOrFail({ id: knowledgeId })),
      approval: viewApproval(await em.getRepository(RoomApproval).findOneByOrFail({ id: approvalId })),
    };
  });
}
