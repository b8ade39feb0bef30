import { string } from 'yup';
import { APPROVAL_KINDS, APPROVAL_STATUSES } from '../../db/entities/room-approval';
import { RUN_STATUSES } from '../../db/entities/room-agent-run';
import { cancelRun, getRun, invokeAgent, listRuns } from '../../db/rooms/agent-runs';
import { decideApproval } from '../../db/rooms/approval-decisions';
import { listApprovals } from '../../db/rooms/approvals';
import { MESSAGE_BODY_MAX } from '../../db/rules/room-rules';
import { forbidden } from '../../runtime/service-error';
import { assertAiConfigured } from '../ai/ai-runner';
import type { AppDeps } from '../app-deps';
import { sessionPrincipal } from '../plugins/auth';
import { idParams, pathParams } from '../plugins/path-params';
import { dataOf, errorOf, pageOf } from '../plugins/responses';
import { pageQuery, RouteApp, strictObject } from '../plugins/validation';
import { READ, ROOMS_ROUTE, WRITE, addRoomsVersionHeader, productCaller } from './room-caller';
import { agentRunSchema, approvalSchema, END_USER_NOT_JOINED, ROOM_ARCHIVED } from './schemas';

const invokeParams = strictObject({ id: string().required().max(100), alias: string().required().max(100) });
const invokeBody = strictObject({
  input: string().min(1).max(MESSAGE_BODY_MAX).required(),
  visibility: string().oneOf(['customer', 'internal'] as const),
}).required();
const runsQuery = strictObject({ ...pageQuery, status: string().oneOf([...RUN_STATUSES]) });
const runParams = pathParams('runId');
const approvalParams = pathParams('approvalId');
const approvalsQuery = strictObject({
  ...pageQuery,
  status: string().oneOf([...APPROVAL_STATUSES]),
  kind: string().oneOf([...APPROVAL_KINDS]),
  roomId: string().max(100),
});
const approveBody = strictObject({ note: string().max(1000) }).nullable();
const rejectBody = strictObject({ reason: string().max(2000) }).nullable();
const DECIDERS = {
  auth: 'session' as const, roles: ['owner' as const, 'admin' as const], keyRefusal: 'HUMAN_APPROVAL_REQUIRED' as const, identityRefusal: true,
};

/** Agent runs (`agent-run/<runId>`) and the approvals only a workspace owner or admin decides (docs/rooms.md#agent-runs-and-approvals). */
export async function agentRunRoutes(app: RouteApp, deps: AppDeps): Promise<void> {
  const ds = deps.dataSource;
  addRoomsVersionHeader(app);

  app.post('/api/v1/rooms/:id/agents/:alias/invoke', {
    schema: {
      params: invokeParams,
      body: invokeBody,
      response: {
        202: dataOf(agentRunSchema),
        403: errorOf('FORBIDDEN: an end user asked for `visibility: internal`, or has not joined the room'),
        409: ROOM_ARCHIVED,
        503: errorOf('AI_UNAVAILABLE: no AI provider is configured (no run is made)'),
      },
    },
    config: { ...ROOMS_ROUTE, auth: 'key-or-identity', scope: WRITE, idempotency: 'optional', operationId: 'invokeRoomAgent',
      summary: 'Start an agent run (queued; its workflow starts through the outbox)' },
  }, async (request, reply) => {
    const caller = productCaller(request);
    const visibility = request.body.visibility ?? 'customer';
    if (visibility === 'internal' && caller.kind === 'end_user') throw forbidden('end users start customer-visible runs only');
    const run = await invokeAgent(
      ds, caller, request.params.id, { alias: request.params.alias, input: request.body.input, visibility }, deps.config.roomApprovalTtlMs,
      () => assertAiConfigured(deps),
    );
    return reply.code(202).send({ data: run });
  });

  app.get('/api/v1/rooms/:id/agent-runs', {
    schema: {
      params: idParams,
      querystring: runsQuery,
      response: { 200: pageOf(agentRunSchema), 403: END_USER_NOT_JOINED },
    },
    config: { ...ROOMS_ROUTE, auth: 'key-or-identity', scope: READ, operationId: 'listRoomAgentRuns',
      summary: 'Agent runs of the room, newest first (an end user: only its own)' },
  }, async (request) => {
    const { limit, cursor, status } = request.query;
    return listRuns(ds, productCaller(request), request.params.id, status, { limit, cursor });
  });

  app.get('/api/v1/agent-runs/:runId', {
    schema: { params: runParams, response: { 200: dataOf(agentRunSchema) } },
    config: { ...ROOMS_ROUTE, auth: 'key-or-identity', scope: READ, operationId: 'getAgentRun',
      summary: 'One agent run (unknown and not one\'s own are the same 404)' },
  }, async (request) => ({ data: await getRun(ds, productCaller(request), request.params.runId) }));

  app.post('/api/v1/agent-runs/:runId/cancel', {
    schema: {
      params: runParams,
      response: { 200: dataOf(agentRunSchema), 409: errorOf('CONFLICT: the run already succeeded or failed') },
    },
    config: { ...ROOMS_ROUTE, auth: 'key-or-identity', scope: WRITE, operationId: 'cancelAgentRun',
      summary: 'Cancel a run; a cancelled run never executes its side effect later' },
  }, async (request) => ({ data: await cancelRun(ds, productCaller(request), request.params.runId) }));

  app.get('/api/v1/approvals', {
    schema: { querystring: approvalsQuery, response: { 200: pageOf(approvalSchema) } },
    config: { ...ROOMS_ROUTE, auth: 'key-or-identity', scope: READ, operationId: 'listRoomApprovals',
      summary: 'Approvals, newest first (an end user: of its own runs and appeals)' },
  }, async (request) => {
    const { limit, cursor, ...filter } = request.query;
    return listApprovals(ds, productCaller(request), filter, { limit, cursor });
  });

  app.post('/api/v1/approvals/:approvalId/approve', {
    schema: {
      params: approvalParams,
      body: approveBody,
      response: {
        200: dataOf(approvalSchema),
        403: errorOf('HUMAN_APPROVAL_REQUIRED (a service key), or FORBIDDEN (an end user, a member teammate, no x-csrf-token)'),
        409: errorOf('CONFLICT: the approval is no longer pending'),
      },
    },
    config: { ...ROOMS_ROUTE, ...DECIDERS, operationId: 'approveRoomApproval', summary: 'Approve (a workspace owner or admin): the held action goes ahead' },
  }, async (request) => {
    const session = sessionPrincipal(request);
    return { data: await decideApproval(ds, session, request.params.approvalId, 'approved', request.body?.note ?? null) };
  });

  app.post('/api/v1/approvals/:approvalId/reject', {
    schema: {
      params: approvalParams,
      body: rejectBody,
      response: {
        200: dataOf(approvalSchema),
        403: errorOf('HUMAN_APPROVAL_REQUIRED (a service key), or FORBIDDEN (an end user, a member teammate, no x-csrf-token)'),
        409: errorOf('CONFLICT: the approval is no longer pending'),
      },
    },
    config: { ...ROOMS_ROUTE, ...DECIDERS, operationId: 'rejectRoomApproval', summary: 'Reject (a workspace owner or admin): the held action never happens' },
  }, async (request) => {
    const session = sessionPrincipal(request);
    return { data: await decideApproval(ds, session, request.params.approvalId, 'rejected', request.body?.reason ?? null) };
  });
}
