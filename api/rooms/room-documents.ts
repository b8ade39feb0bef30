import { array, number, object, string } from 'yup';
import { compiledDocument, promote, startCompile } from '../../db/rooms/documents';
import { ServiceError, validationFailed } from '../../runtime/service-error';
import { startOnce } from '../../runtime/start-once';
import { tenantStartOptions } from '../../runtime/workflow-memo';
import { roomCompileWorkflow } from '../../workflows/rooms/room-compile-workflow';
import { roomCompileWorkflowId } from '../../workflows/workflow-ids';
import { assertAiConfigured, endedWithin } from '../ai/ai-runner';
import type { AppDeps } from '../app-deps';
import { idParams } from '../plugins/path-params';
import { dataOf, errorOf, named, timestamp } from '../plugins/responses';
import { RouteApp, strictObject } from '../plugins/validation';
import { ROOMS_ROUTE, WRITE, addRoomsVersionHeader, keyOnly } from './room-caller';
import { approvalSchema, ROOM_ARCHIVED } from './schemas';

const citation = object({ type: string().oneOf(['message', 'signal'] as const).required(), id: string().required() });
export const documentSchema = named('RoomDocument', object({
  id: string().required(),
  roomId: string().required(),
  title: string().required(),
  statements: array(object({ section: string().defined(), text: string().required(), citations: array(citation).defined() })).defined(),
  rejected: array(object({ text: string().required(), reason: string().oneOf(['no_valid_citation'] as const).required() })).defined(),
  removedCitations: array(object({ id: string().required(), reason: string().oneOf(['unknown', 'internal', 'not_evidence'] as const).required() })).defined(),
  model: object({ provider: string().defined(), name: string().defined() }).required(),
  createdAt: timestamp().required(),
}));

export const knowledgeSchema = named('RoomKnowledge', object({
  id: string().required(),
  roomId: string().required(),
  title: string().required(),
  body: string().required(),
  documentId: string().nullable().defined(),
  sourceIds: array(string().defined()).defined(),
  state: string().oneOf(['pending_approval', 'published', 'rejected'] as const).required(),
  approvalId: string().required(),
  publishedAt: timestamp().nullable().defined(),
}));

const compileBody = strictObject({ title: string().min(3).max(180).required(), maxStatements: number().integer().min(1).max(50) }).required();
const promoteBody = strictObject({
  documentId: string().max(100),
  title: string().min(3).max(180),
  body: string().min(1).max(20_000),
  sourceMessageIds: array(string().required().max(100)).max(50),
}).required();

/** Compile (a cited PRD from customer-visible evidence) and promote (knowledge a person publishes), docs/rooms.md#compile-and-promote. */
export async function roomDocumentRoutes(app: RouteApp, deps: AppDeps): Promise<void> {
  const ds = deps.dataSource;
  const { config } = deps;
  addRoomsVersionHeader(app);

  app.post('/api/v1/rooms/:id/compile', {
    schema: {
      params: idParams,
      body: compileBody,
      response: {
        201: dataOf(documentSchema),
        409: ROOM_ARCHIVED,
        422: errorOf('CITATION_VALIDATION_FAILED: no customer-visible evidence, or no statement kept a valid citation (details.rejected)'),
        503: errorOf('AI_UNAVAILABLE: no provider configured, or it kept failing; nothing is made up'),
      },
    },
    config: {
      ...ROOMS_ROUTE,
      auth: 'key', scope: WRITE, identityRefusal: true, idempotency: 'optional', operationId: 'compileRoom',
      summary: 'Compile a PRD whose every statement cites the room\'s customer-visible evidence',
    },
  }, async (request, reply) => {
    const caller = keyOnly(request);
    const ai = { maxAttempts: config.aiMaxAttempts, retryInitialMs: config.aiRetryInitialMs, timeoutMs: config.aiTimeoutMs };
    const documentId = await startCompile(
      ds, caller, request.params.id, { title: request.body.title, maxStatements: request.body.maxStatements ?? 20 }, ai, () => assertAiConfigured(deps),
    );
    let ended = false;
    try {
      // The same run the outbox start names: whichever comes first starts it.
      const handle = await startOnce(deps.temporal.workflow, roomCompileWorkflow, {
        workflowId: roomCompileWorkflowId(documentId),
        taskQueue: config.taskQueue,
        args: [{ documentId, ai }],
        ...tenantStartOptions(caller.organizationId, caller.productId),
      });
      // The record tells the outcome; a failed run has already written it there. The wait is bounded: the
      // run goes on past it and fills the record.
      ended = await endedWithin(handle.result(), config.aiWaitMs);
    } catch (err) {
      // Temporal unreachable: the outbox starts the run once it is back, and the record fills then.
      request.log.error({ err }, 'could not start the compile workflow');
    }
    if (!ended) {
      throw new ServiceError('AI_UNAVAILABLE', 'the compile is still running; the document records its outcome', { documentId, reason: 'still_running' },
        { 'retry-after': '30' });
    }
    return reply.code(201).send({ data: await compiledDocument(ds, documentId) });
  });

  app.post('/api/v1/rooms/:id/promote', {
    schema: {
      params: idParams,
      body: promoteBody,
      response: {
        202: dataOf(object({ knowledge: knowledgeSchema.required(), approval: approvalSchema.required() })),
        409: ROOM_ARCHIVED,
      },
    },
    config: {
      ...ROOMS_ROUTE,
      auth: 'key', scope: WRITE, identityRefusal: true, idempotency: 'optional', operationId: 'promoteRoomKnowledge',
      summary: 'Propose canonical knowledge; only a person\'s approval publishes it',
    },
  }, async (request, reply) => {
    const { documentId, title, body } = request.body;
    if (documentId === undefined && (title === undefined || body === undefined)) {
      throw validationFailed([{ path: documentId === undefined && title === undefined ? 'title' : 'body', message: 'send documentId, or title and body' }]);
    }
    if (documentId !== undefined && (title !== undefined || body !== undefined || request.body.sourceMessageIds !== undefined)) {
      throw validationFailed([{ path: 'documentId', message: 'send documentId alone, or title, body and sourceMessageIds' }]);
    }
    return reply.code(202).send({ data: await promote(ds, keyOnly(request), request.params.id, request.body) });
  });
}
