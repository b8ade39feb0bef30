import { number, string } from 'yup';
import { roomEvents } from '../../db/rooms/room-events';
import { postMessage } from '../../db/rooms/room-messages';
import { MESSAGE_BODY_MAX } from '../../db/rules/room-rules';
import type { AppDeps } from '../app-deps';
import { idParams } from '../plugins/path-params';
import { dataOf } from '../plugins/responses';
import { pageQuery, RouteApp, strictObject } from '../plugins/validation';
import { ROOMS_ROUTE, addRoomsVersionHeader, roomCaller } from './room-caller';
import { eventsPageSchema, messageSchema, ROOM_ARCHIVED } from './schemas';

const eventsQuery = strictObject({ after: number().integer().min(0), limit: pageQuery.limit });
const messageBody = strictObject({
  body: string().min(1).max(MESSAGE_BODY_MAX).required(),
  visibility: string().oneOf(['customer', 'internal'] as const).required(),
  kind: string().oneOf(['text', 'decision'] as const),
}).required();

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

  app.post('/api/workspace/rooms/:id/messages', {
    schema: { params: idParams, body: messageBody, response: { 201: dataOf(messageSchema), 409: ROOM_ARCHIVED } },
    config: { ...ROOMS_ROUTE, auth: 'session', operationId: 'postWorkspaceRoomMessage',
      summary: 'Post as a teammate: a reply, an internal note, or a decision' },
  }, async (request, reply) => {
    const { body, visibility, kind } = request.body;
    return reply.code(201).send({ data: await postMessage(ds, roomCaller(request), request.params.id, { body, visibility, kind: kind ?? 'text' }) });
  });
}
