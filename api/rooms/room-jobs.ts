import { AnySchema, ValidationError, boolean, string } from 'yup';
import { JOB_TYPES, JobType } from '../../db/entities/room-job';
import { endHandoff, getHandoff, requestHandoff } from '../../db/rooms/handoffs';
import { JobParams, createJob, getJob } from '../../db/rooms/jobs';
import { joinSolveSession } from '../../db/rooms/solve-sessions';
import { forbidden, validationFailed } from '../../runtime/service-error';
import type { AppDeps } from '../app-deps';
import { idParams, idString, pathParams } from '../plugins/path-params';
import { dataOf, errorOf } from '../plugins/responses';
import { isoDateTime, issuesOf, openObject, RouteApp, strictObject } from '../plugins/validation';
import { READ, ROOMS_ROUTE, WRITE, addRoomsVersionHeader, endUserOnly, keyOnly, productCaller } from './room-caller';
import { handoffSchema, jobSchema, ROOM_ARCHIVED, solveJoinSchema } from './schemas';

const DAY_MS = 86_400_000;
const PROMISE_HORIZON_DAYS = 365;

/** The params of each job type (docs/rooms.md#jobs-promises-solve-sessions-and-handoff); checked before anything is stored. */
const PARAMS: Record<JobType, AnySchema> = {
  send_release_receipts: strictObject({ releaseId: idString() }).required(),
  make_promise: strictObject({
    text: string().min(1).max(500).required(),
    dueAt: isoDateTime().required()
      .test('future', 'must be in the future', (v) => v === undefined || Date.parse(v) > Date.now())
      .test('horizon', `must be at most ${PROMISE_HORIZON_DAYS} days ahead`,
        (v) => v === undefined || Date.parse(v) <= Date.now() + PROMISE_HORIZON_DAYS * DAY_MS),
  }).required(),
  complete_promise: strictObject({ promiseId: idString() }).required(),
  open_solve_session: strictObject({ termsVersion: string().min(1).max(50).required(), termsText: string().min(1).max(10_000).required() }).required(),
  end_solve_session: strictObject({ sessionId: idString() }).required(),
};

const jobBody = strictObject({
  type: string().oneOf([...JOB_TYPES]).required(),
  params: openObject().required().meta({ description: 'per type (docs/rooms.md#jobs-promises-solve-sessions-and-handoff): releaseId; text, dueAt; promiseId; ' +
    'termsVersion, termsText; sessionId' }),
}).required();
const jobParams = pathParams('id', 'jobId');
const sessionParams = pathParams('id', 'sessionId');
const joinBody = strictObject({
  consent: strictObject({
    termsVersion: string().min(1).max(50).required(),
    termsSha256: string().required().matches(/^[0-9a-fA-F]{64}$/, 'must be the hex SHA-256 of the terms text'),
    accepted: boolean().required().oneOf([true], 'must be true: joining records the session under these terms'),
  }).required(),
}).required();
const handoffBody = strictObject({ reason: string().max(500).nullable(), teammateId: string().max(100) }).nullable();

function checkParams(type: JobType, params: unknown): JobParams {
  try {
    PARAMS[type].validateSync(params, { strict: true, abortEarly: false });
  } catch (err) {
    if (!(err instanceof ValidationError)) throw err;
    throw validationFailed(issuesOf(err).map((i) => ({ ...i, path: i.path ? `params.${i.path}` : 'params' })));
  }
  return { type, params } as JobParams;
}

/** Jobs, solve sessions and handoff (docs/rooms.md#paths, docs/rooms.md#jobs-promises-solve-sessions-and-handoff). */
export async function roomJobRoutes(app: RouteApp, deps: AppDeps): Promise<void> {
  const ds = deps.dataSource;
  addRoomsVersionHeader(app);

  app.post('/api/v1/rooms/:id/jobs', {
    schema: {
      params: idParams,
      body: jobBody,
      response: {
        202: dataOf(jobSchema),
        409: errorOf('CONFLICT: the promise is not active, the solve session has ended, or the room is archived'),
      },
    },
    config: {
      ...ROOMS_ROUTE,
      auth: 'key', scope: WRITE, identityRefusal: true, idempotency: 'optional', operationId: 'createRoomJob',
      summary: 'Start a room job (queued; `room-job/<jobId>` starts through the outbox)',
    },
  }, async (request, reply) => {
    const job = checkParams(request.body.type, request.body.params);
    return reply.code(202).send({ data: await createJob(ds, keyOnly(request), request.params.id, job) });
  });

  app.get('/api/v1/rooms/:id/jobs/:jobId', {
    schema: { params: jobParams, response: { 200: dataOf(jobSchema) } },
    config: { ...ROOMS_ROUTE, auth: 'key', scope: READ, identityRefusal: true, operationId: 'getRoomJob', summary: 'One room job, with its result or error' },
  }, async (request) => ({ data: await getJob(ds, keyOnly(request), request.params.id, request.params.jobId) }));

  app.post('/api/v1/rooms/:id/solve-sessions/:sessionId/join', {
    schema: {
      params: sessionParams,
      body: joinBody,
      response: {
        200: dataOf(solveJoinSchema),
        403: errorOf('FORBIDDEN: the end user has not joined the room'),
        409: errorOf('CONSENT_INVALID: the version or hash is not the session\'s terms; CONFLICT: the session ended, or the room is archived'),
      },
    },
    config: { ...ROOMS_ROUTE, auth: 'identity', operationId: 'joinSolveSession',
      summary: 'Join a recorded solve session, consenting to its recording terms (a repeat answers the same)' },
  }, async (request) => ({
    data: await joinSolveSession(ds, endUserOnly(request), request.params.id, request.params.sessionId,
      // The schema admits `accepted: true` only; yup types a boolean's oneOf as boolean.
      { ...request.body.consent, accepted: true }),
  }));

  app.get('/api/v1/rooms/:id/handoff', {
    schema: {
      params: idParams,
      response: { 200: dataOf(handoffSchema.nullable()), 403: errorOf('FORBIDDEN: the end user has not joined the room') },
    },
    config: { ...ROOMS_ROUTE, auth: 'key-or-identity', scope: READ, operationId: 'getRoomHandoff', summary: 'The active handoff, or the latest, or null' },
  }, async (request) => ({ data: await getHandoff(ds, productCaller(request), request.params.id) }));

  app.post('/api/v1/rooms/:id/handoff', {
    schema: {
      params: idParams,
      body: handoffBody,
      response: {
        201: dataOf(handoffSchema),
        403: errorOf('FORBIDDEN: an end user named a teammate, or has not joined the room'),
        409: errorOf('CONFLICT: a handoff is already active, or the room is archived'),
      },
    },
    config: {
      ...ROOMS_ROUTE,
      auth: 'key-or-identity', scope: WRITE, idempotency: 'optional', operationId: 'requestRoomHandoff',
      summary: 'Hand the room to a person; a named teammate (key only) becomes a member',
    },
  }, async (request, reply) => {
    const caller = productCaller(request);
    const teammateId = request.body?.teammateId ?? null;
    if (teammateId !== null && caller.kind === 'end_user') throw forbidden('only a key names the teammate');
    const handoff = await requestHandoff(ds, caller, request.params.id, { reason: request.body?.reason ?? null, teammateId });
    return reply.code(201).send({ data: handoff });
  });

  app.delete('/api/v1/rooms/:id/handoff', {
    schema: {
      params: idParams,
      response: {
        200: dataOf(handoffSchema),
        403: errorOf('FORBIDDEN: an end user other than the one who asked for the handoff'),
        409: ROOM_ARCHIVED,
      },
    },
    config: { ...ROOMS_ROUTE, auth: 'key-or-identity', scope: WRITE, idempotency: 'optional', operationId: 'endRoomHandoff',
      summary: 'End the active handoff (404 when none is active)' },
  }, async (request) => ({ data: await endHandoff(ds, productCaller(request), request.params.id) }));
}
