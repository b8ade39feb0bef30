import { number, string } from 'yup';
import { APPROVAL_KINDS, APPROVAL_STATUSES } from '../../db/entities/room-approval';
import { listWorkspaceApprovals } from '../../db/rooms/approvals';
import { roomEvents } from '../../db/rooms/room-events';
import { postMessage } from '../../db/rooms/room-messages';
import { MESSAGE_BODY_MAX } from '../../db/rules/room-rules';
import type { AppDeps } from '../app-deps';
import { sessionPrincipal } from '../plugins/auth';
import { idParams } from '../plugins/path-params';
import { dataOf, pageOf } from '../plugins/responses';
import { RouteApp, pageQuery, strictObject } from '../plugins/validation';
import { ROOMS_ROUTE, addRoomsVersionHeader, roomCaller } from './room-caller';
import { approvalSchema, eventsPageSchema, messageSchema, ROOM_ARCHIVED } from './schemas';

const eventsQuery = strictObject({ after: number().integer().min(0), limit: pageQuery.limit });
const messageBody = strictObject({
  body: string().min(1).max(MESSAGE_BODY_MAX).required(),
  visibility: string().oneOf(['customer', 'internal'] as const).required(),
  kind: string().oneOf(['text', 'decision'] as const),
}).required();
const approvalsQuery = strictObject({
  ...pageQuery,
  status: string().oneOf([...APPROVAL_STATUSES]),
  kind: string().oneOf([...APPROVAL_KINDS]),
  roomId: string().max(100),
});

/** The workspace's view of a room: every event unfiltered, and posting as a teammate (who becomes a member). */
export async function workspaceRoomRoutes(app: RouteApp, deps: AppDeps): Promise<void> {
  const ds = deps.dataSource;
  addRoomsVersionHeader(app);

  app.get('/api/workspace/rooms/:id/events', {
    schema: { params: idParams, querystring: eventsQuery, response: { 200: dataOf(eventsPageSchema) } },
    config: { ...ROOMS_ROUTE, auth: 'session', operationId: 'listWorkspaceRoomEvents', summary: 'The room\'s events, nothing filtered, or a snapshot' },
  }, async (request) => ({
    data: await roomEvents(ds, roomCaller(request), request.params.id, request.query, {
      snapshotThreshold: deps.config.roomSnapshotThreshold, snapshotMessages: deps.config.roomSnapshotMessages,
    }),
  }));

  app.get('/api/workspace/rooms/approvals', {
    schema: { querystring: approvalsQuery, response: { 200: pageOf(approvalSchema) } },
    config: {
      ...ROOMS_ROUTE, auth: 'session', operationId: 'listWorkspaceApprovals',
      summary: 'Approvals of every room of the workspace, newest first (agent actions, promises, knowledge, appeals); owners and admins decide them',
    },
  }, async (request) => {
    const { limit, cursor, ...filter } = request.query;
    return listWorkspaceApprovals(ds, sessionPrincipal(request).organizationId, filter, { limit, cursor });
  });

  app.post('/api/workspace/rooms/:id/messages', {
    schema: { params: idParams, body: messageBody, response: { 201: dataOf(messageSchema), 409: ROOM_ARCHIVED } },
    config: { ...ROOMS_ROUTE, auth: 'session', operationId: 'postWorkspaceRoomMessage',
      summary: 'Post as a teammate: a reply, an internal note, or a decision' },
  }, async (request, reply) => {
    const { body, visibility, kind } = request.body;
    return reply.code(201).send({ data: await postMessage(ds, roomCaller(request), request.params.id, { body, visibility, kind: kind ?? 'text' }) });
  });
}
