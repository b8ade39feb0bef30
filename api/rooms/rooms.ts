import { array, number, string } from 'yup';
import { MEMBER_STATES } from '../../db/entities/room-member';
import { ROOM_KINDS, ROOM_STATUSES, ROOM_VISIBILITIES } from '../../db/entities/room';
import { getCanvas, patchCanvas } from '../../db/rooms/canvas';
import { catchUp, roomEvents } from '../../db/rooms/room-events';
import { inviteMembers, joinRoom, leaveRoom, listMembers, removeMember } from '../../db/rooms/room-members';
import { deleteMessage, editMessage, postMessage } from '../../db/rooms/room-messages';
import { createRoom, getRoom, listRooms, patchRoom, searchRooms } from '../../db/rooms/rooms';
import { CANVAS_CONTENT_MAX, MESSAGE_ATTACHMENTS_MAX, MESSAGE_BODY_MAX, POLL_OPTIONS_MAX, POLL_OPTIONS_MIN, POLL_OPTION_MAX } from '../../db/rules/room-rules';
import { forbidden, validationFailed } from '../../runtime/service-error';
import type { AppDeps } from '../app-deps';
import { pathParams, idParams } from '../plugins/path-params';
import { dataOf, errorOf, pageOf } from '../plugins/responses';
import { pageQuery, RouteApp, strictObject } from '../plugins/validation';
import { READ, ROOMS_ROUTE, WRITE, addRoomsVersionHeader, endUserOnly, keyOnly, productCaller, roomCaller } from './room-caller';
import {
  CALLER_NOT_JOINED, canvasSchema, catchUpSchema, END_USER_NOT_JOINED, eventsPageSchema, invitedSchema, memberSchema, messageSchema, ROOM_ARCHIVED, roomSchema,
  searchHitSchema,
} from './schemas';

const ids = () => array(string().required().max(100)).max(20);
const roomFields = {
  title: string().min(1).max(180),
  kind: string().oneOf([...ROOM_KINDS]),
  purpose: string().max(1000).nullable(),
  visibility: string().oneOf([...ROOM_VISIBILITIES]),
  threadIds: ids(),
  featureIds: ids(),
};
const createBody = strictObject({ ...roomFields, title: roomFields.title.required() }).required();
const patchBody = strictObject({
  ...roomFields,
  status: string().oneOf([...ROOM_STATUSES]),
  readMarker: number().integer().min(0),
}).required();
const listQuery = strictObject({ ...pageQuery, status: string().oneOf([...ROOM_STATUSES]) });
const searchQuery = strictObject({ ...pageQuery, q: string().min(1).max(200).required(), status: string().oneOf([...ROOM_STATUSES]) });
const eventsQuery = strictObject({ after: number().integer().min(0), limit: pageQuery.limit });
const messageBody = strictObject({
  body: string().min(1).max(MESSAGE_BODY_MAX).required(),
  kind: string().oneOf(['text', 'poll'] as const),
  poll: strictObject({
    options: array(string().min(1).max(POLL_OPTION_MAX).required()).min(POLL_OPTIONS_MIN).max(POLL_OPTIONS_MAX).required(),
  }).default(undefined),
  attachmentIds: array(string().required().max(100)).max(MESSAGE_ATTACHMENTS_MAX),
  visibility: string().oneOf(['customer', 'internal'] as const),
}).required().test('poll-iff-kind', function pollIffKind(value) {
  const isPoll = value?.kind === 'poll';
  if (isPoll === (value?.poll !== undefined)) return true;
  return this.createError({ path: 'poll', message: isPoll ? 'a poll needs poll.options' : 'poll is only for kind poll' });
});
const editBody = strictObject({ body: string().min(1).max(MESSAGE_BODY_MAX).required() }).required();
const messageParams = pathParams('id', 'messageId');
const memberParams = pathParams('id', 'principalId');
const membersQuery = strictObject({ ...pageQuery, state: string().oneOf([...MEMBER_STATES]) });
const inviteBody = strictObject({ endUserIds: array(string().min(1).max(200).required()).min(1).max(100).required() }).required();
const canvasQuery = strictObject({ version: number().integer().min(0) });
const canvasBody = strictObject({ content: string().max(CANVAS_CONTENT_MAX).defined(), baseVersion: number().integer().min(0) }).required();

/** The Rooms routes of rooms, members, messages, the event log, catch-up and the canvas (docs/rooms.md#paths). */
export async function roomRoutes(app: RouteApp, deps: AppDeps): Promise<void> {
  const ds = deps.dataSource;
  addRoomsVersionHeader(app);

  app.get('/api/v1/rooms', {
    schema: { querystring: listQuery, response: { 200: pageOf(roomSchema) } },
    config: { ...ROOMS_ROUTE, auth: 'identity', operationId: 'listRooms', summary: 'Rooms the end user was invited to or joined, newest first' },
  }, async (request) => {
    const { limit, cursor, status } = request.query;
    return listRooms(ds, endUserOnly(request), { status }, { limit, cursor });
  });

  app.post('/api/v1/rooms', {
    schema: { body: createBody, response: { 201: dataOf(roomSchema) } },
    config: { ...ROOMS_ROUTE, auth: 'identity', operationId: 'createRoom', summary: 'Open a room; the caller becomes its owner' },
  }, async (request, reply) => reply.code(201).send({ data: await createRoom(ds, endUserOnly(request), request.body) }));

  app.get('/api/v1/rooms/search', {
    schema: { querystring: searchQuery, response: { 200: pageOf(searchHitSchema) } },
    config: { ...ROOMS_ROUTE, auth: 'key-or-identity', scope: READ, operationId: 'searchRooms',
      summary: 'Rooms whose title, purpose or a visible message contains the text' },
  }, async (request) => {
    const { limit, cursor, q, status } = request.query;
    return searchRooms(ds, productCaller(request), q, { status }, { limit, cursor });
  });

  app.get('/api/v1/rooms/:id', {
    schema: { params: idParams, response: { 200: dataOf(roomSchema) } },
    config: { ...ROOMS_ROUTE, auth: 'identity', operationId: 'getRoom', summary: 'One room, with the caller\'s membership' },
  }, async (request) => ({ data: await getRoom(ds, endUserOnly(request), request.params.id) }));

  app.patch('/api/v1/rooms/:id', {
    schema: {
      params: idParams,
      body: patchBody,
      response: {
        200: dataOf(roomSchema),
        403: errorOf('FORBIDDEN: not joined, or a change other than readMarker by someone other than the owner'),
        409: errorOf('CONFLICT: a status move the room does not allow, a write to an archived room, or a read marker moved back'),
      },
    },
    config: { ...ROOMS_ROUTE, auth: 'identity', operationId: 'updateRoom', summary: 'Change the room (owner) or move one\'s read marker (any member)' },
  }, async (request) => {
    if (Object.keys(request.body).length === 0) throw validationFailed([{ path: '', message: 'send at least one field' }]);
    return { data: await patchRoom(ds, endUserOnly(request), request.params.id, request.body) };
  });

  app.get('/api/v1/rooms/:id/events', {
    schema: {
      params: idParams,
      querystring: eventsQuery,
      response: { 200: dataOf(eventsPageSchema), 403: CALLER_NOT_JOINED },
    },
    config: { ...ROOMS_ROUTE, auth: 'identity', operationId: 'listRoomEvents', summary: 'The room\'s events after a seq, or a snapshot when too far behind' },
  }, async (request) => ({
    data: await roomEvents(ds, endUserOnly(request), request.params.id, request.query, {
      snapshotThreshold: deps.config.roomSnapshotThreshold, snapshotMessages: deps.config.roomSnapshotMessages,
    }),
  }));

  app.get('/api/v1/rooms/:id/catch-up', {
    schema: { params: idParams, response: { 200: dataOf(catchUpSchema), 403: CALLER_NOT_JOINED } },
    config: { ...ROOMS_ROUTE, auth: 'identity', operationId: 'catchUpRoom', summary: 'What arrived since the caller\'s read marker' },
  }, async (request) => ({ data: await catchUp(ds, endUserOnly(request), request.params.id) }));

  app.post('/api/v1/rooms/:id/join', {
    schema: {
      params: idParams,
      response: {
        200: dataOf(memberSchema), 403: errorOf('FORBIDDEN: the caller was removed from this room'), 409: ROOM_ARCHIVED,
      },
    },
    config: { ...ROOMS_ROUTE, auth: 'identity', operationId: 'joinRoom', summary: 'Join a product room, or a private room one was invited to' },
  }, async (request) => ({ data: await joinRoom(ds, endUserOnly(request), request.params.id) }));

  app.post('/api/v1/rooms/:id/leave', {
    schema: {
      params: idParams,
      response: { 200: dataOf(memberSchema), 403: errorOf('FORBIDDEN: the caller is not a member'), 409: errorOf('CONFLICT: the owner cannot leave') },
    },
    config: { ...ROOMS_ROUTE, auth: 'identity', operationId: 'leaveRoom', summary: 'Leave a room (or decline an invitation)' },
  }, async (request) => ({ data: await leaveRoom(ds, endUserOnly(request), request.params.id) }));

  app.post('/api/v1/rooms/:id/messages', {
    schema: {
      params: idParams,
      body: messageBody,
      response: {
        201: dataOf(messageSchema),
        403: errorOf('FORBIDDEN: not joined, or `visibility: internal` (end users post customer messages only)'),
        409: ROOM_ARCHIVED,
      },
    },
    config: {
      ...ROOMS_ROUTE,
      auth: 'identity', operationId: 'postRoomMessage',
      summary: 'Post a customer-visible message: text, or a poll (the body is its question); with up to 10 of one\'s unattached uploads',
    },
  }, async (request, reply) => {
    const { body, visibility, kind, poll, attachmentIds } = request.body;
    if (visibility === 'internal') throw forbidden('end users post customer-visible messages only');
    const message = await postMessage(ds, endUserOnly(request), request.params.id, { body, kind: kind ?? 'text', poll, attachmentIds, visibility: 'customer' });
    return reply.code(201).send({ data: message });
  });

  app.patch('/api/v1/rooms/:id/messages/:messageId', {
    schema: {
      params: messageParams,
      body: editBody,
      response: {
        200: dataOf(messageSchema), 403: errorOf('FORBIDDEN: not the author, or not joined'),
        409: errorOf('CONFLICT: the message was deleted, or the room is archived'),
      },
    },
    config: { ...ROOMS_ROUTE, auth: 'identity', operationId: 'editRoomMessage', summary: 'Edit one\'s own message' },
  }, async (request) => ({ data: await editMessage(ds, endUserOnly(request), request.params.id, request.params.messageId, request.body.body) }));

  app.delete('/api/v1/rooms/:id/messages/:messageId', {
    schema: {
      params: messageParams,
      response: { 200: dataOf(messageSchema), 403: errorOf('FORBIDDEN: not the author, or not joined'), 409: ROOM_ARCHIVED },
    },
    config: { ...ROOMS_ROUTE, auth: 'identity', operationId: 'deleteRoomMessage', summary: 'Delete one\'s own message (a repeat answers the same)' },
  }, async (request) => ({ data: await deleteMessage(ds, endUserOnly(request), request.params.id, request.params.messageId) }));

  app.get('/api/v1/rooms/:id/members', {
    schema: {
      params: idParams,
      querystring: membersQuery,
      response: { 200: pageOf(memberSchema), 403: END_USER_NOT_JOINED },
    },
    config: { ...ROOMS_ROUTE, auth: 'key-or-identity', scope: READ, operationId: 'listRoomMembers',
      summary: 'Members of the room (invited and joined unless `state` says)' },
  }, async (request) => {
    const { limit, cursor, state } = request.query;
    return listMembers(ds, roomCaller(request), request.params.id, state ? [state] : undefined, { limit, cursor });
  });

  app.post('/api/v1/rooms/:id/members', {
    schema: {
      params: idParams,
      body: inviteBody,
      response: { 201: dataOf(invitedSchema), 409: errorOf('CONFLICT: over 1000 members, or the room is archived') },
    },
    config: {
      ...ROOMS_ROUTE,
      auth: 'key', scope: WRITE, identityRefusal: true, idempotency: 'optional', operationId: 'inviteRoomMembers',
      summary: 'Invite end users (customers, external); unknown ones are created',
    },
  }, async (request, reply) => reply.code(201).send({ data: await inviteMembers(ds, keyOnly(request), request.params.id, request.body.endUserIds) }));

  app.delete('/api/v1/rooms/:id/members/:principalId', {
    schema: {
      params: memberParams,
      response: { 200: dataOf(memberSchema), 409: errorOf('CONFLICT: the owner or an agent, or the room is archived') },
    },
    config: {
      ...ROOMS_ROUTE,
      auth: 'key', scope: WRITE, identityRefusal: true, idempotency: 'optional', operationId: 'removeRoomMember',
      summary: 'Remove a member; the runs it started are cancelled',
    },
  }, async (request) => ({ data: await removeMember(ds, keyOnly(request), request.params.id, request.params.principalId) }));

  app.get('/api/v1/rooms/:id/canvas', {
    schema: {
      params: idParams,
      querystring: canvasQuery,
      response: { 200: dataOf(canvasSchema), 403: END_USER_NOT_JOINED },
    },
    config: { ...ROOMS_ROUTE, auth: 'key-or-identity', scope: READ, operationId: 'getRoomCanvas',
      summary: 'The canvas (or an earlier version); etag is the version' },
  }, async (request, reply) => {
    const canvas = await getCanvas(ds, roomCaller(request), request.params.id, request.query.version);
    reply.header('etag', `"${canvas.version}"`);
    return { data: canvas };
  });

  app.patch('/api/v1/rooms/:id/canvas', {
    schema: {
      params: idParams,
      body: canvasBody,
      response: {
        200: dataOf(canvasSchema),
        409: errorOf('CONFLICT: the version given is not the current one (details.currentVersion), or the room is archived'),
      },
    },
    config: {
      ...ROOMS_ROUTE,
      auth: 'key', scope: WRITE, identityRefusal: true, idempotency: 'required', operationId: 'updateRoomCanvas',
      summary: 'Replace the canvas, naming the version it was based on (If-Match and/or baseVersion)',
    },
  }, async (request, reply) => {
    const ifMatch = request.headers['if-match'];
    let headerVersion: number | undefined;
    if (ifMatch !== undefined) {
      const match = typeof ifMatch === 'string' ? /^"(\d{1,9})"$/.exec(ifMatch) : null;
      if (!match) throw validationFailed([{ path: 'If-Match', message: 'must be "<version>"' }]);
      headerVersion = Number(match[1]);
    }
    const { baseVersion, content } = request.body;
    if (headerVersion === undefined && baseVersion === undefined) {
      throw validationFailed([{ path: 'baseVersion', message: 'send If-Match: "<version>" or baseVersion' }]);
    }
    if (headerVersion !== undefined && baseVersion !== undefined && headerVersion !== baseVersion) {
      throw validationFailed([{ path: 'baseVersion', message: 'differs from If-Match' }]);
    }
    const canvas = await patchCanvas(ds, keyOnly(request), request.params.id, (headerVersion ?? baseVersion)!, content);
    reply.header('etag', `"${canvas.version}"`);
    return { data: canvas };
  });
}
