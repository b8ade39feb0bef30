import { FastifyRequest } from 'fastify';
import { number, string } from 'yup';
import { REPORT_REASONS } from '../../db/entities/room-moderation-case';
import { readableAttachment, uploadAttachment } from '../../db/rooms/attachments';
import { appealCase, reportMessage } from '../../db/rooms/moderation';
import { respondToPoll } from '../../db/rooms/polls';
import { toggleReaction } from '../../db/rooms/reactions';
import { attachmentDisposition, declaredAttachmentType, emojiValid, filenameProblem } from '../../db/rules/room-rules';
import { mediaStoreOf } from '../../runtime/media-store';
import { validationFailed } from '../../runtime/service-error';
import type { AppDeps } from '../app-deps';
import { sendStoredRange } from '../plugins/byte-ranges';
import { idParams, pathParams } from '../plugins/path-params';
import { bodyChunks, declaredLength, takeStreamedBodies } from '../plugins/streamed-body';
import { dataOf, errorOf, fileOf, noContent } from '../plugins/responses';
import { RouteApp, strictObject } from '../plugins/validation';
import { ROOMS_ROUTE, addRoomsVersionHeader, endUserOnly } from './room-caller';
import { appealSchema, attachmentSchema, CALLER_NOT_JOINED, moderationCaseSchema, pollSchema, reactionToggleSchema, ROOM_ARCHIVED } from './schemas';

const reactionBody = strictObject({
  emoji: string().required().test('emoji', '1–32 characters, no whitespace', (v) => v === undefined || emojiValid(v)),
}).required();
const pollResponseBody = strictObject({ optionIndex: number().integer().min(0).required() }).required();
const reportBody = strictObject({
  messageId: string().required().max(100),
  reason: string().oneOf([...REPORT_REASONS]).required(),
  note: string().max(1000),
}).required();
const appealBody = strictObject({ statement: string().min(1).max(2000).required() }).required();

/**
 * The declared type, size and filename of an upload, all checked before any lookup and before a byte
 * is read; the bytes themselves are checked as they stream to the store.
 */
function declaredUpload(request: FastifyRequest, maxBytes: number) {
  const declared = declaredAttachmentType(request.headers['content-type']);
  if ('problem' in declared) throw validationFailed([{ path: 'content-type', message: declared.problem }]);
  const length = declaredLength(request);
  if (length === 0) throw validationFailed([{ path: '', message: 'send the file\'s bytes (at least 1 byte)' }]);
  if (length > maxBytes) throw validationFailed([{ path: 'content-length', message: `at most ${maxBytes} bytes (SV_ROOM_ATTACHMENT_MAX_BYTES)` }]);
  const header = request.headers['x-filename'];
  const filename = typeof header === 'string' ? header : null;
  const problem = filename === null ? null : filenameProblem(filename);
  if (problem) throw validationFailed([{ path: 'x-filename', message: problem }]);
  return { contentType: declared.type, chunks: bodyChunks(request), length, filename };
}

/** Reactions, attachments, poll answers, reports and appeals of room messages (docs/rooms.md#reactions-attachments-polls-and-moderation). */
export async function roomMessageExtraRoutes(app: RouteApp, deps: AppDeps): Promise<void> {
  const ds = deps.dataSource;
  const store = mediaStoreOf(deps.config);
  addRoomsVersionHeader(app);

  app.post('/api/v1/rooms/:id/messages/:messageId/reactions', {
    schema: {
      params: pathParams('id', 'messageId'),
      body: reactionBody,
      response: {
        200: dataOf(reactionToggleSchema),
        403: CALLER_NOT_JOINED,
        409: errorOf('CONFLICT: the message was deleted, it already has 20 distinct emoji, or the room is archived'),
      },
    },
    config: { ...ROOMS_ROUTE, auth: 'identity', operationId: 'toggleRoomReaction', summary: 'Add a reaction, or remove the caller\'s same one' },
  }, async (request) => ({
    data: await toggleReaction(ds, endUserOnly(request), request.params.id, request.params.messageId, request.body.emoji),
  }));

  await app.register(async (raw) => {
    // The body is the file itself, in whatever type was declared; the route checks the type, not a parser.
    raw.removeAllContentTypeParsers();
    takeStreamedBodies(raw, '*');
    raw.post<{ Params: { id: string } }>('/api/v1/rooms/:id/attachments', {
      schema: {
        params: idParams,
        response: {
          201: dataOf(attachmentSchema),
          403: CALLER_NOT_JOINED,
          409: ROOM_ARCHIVED,
        },
      },
      config: {
        ...ROOMS_ROUTE,
        auth: 'identity', operationId: 'uploadRoomAttachment',
        summary: 'Upload a file as the raw body (content-type png, jpeg, gif, webp, pdf or UTF-8 text; 1 B–SV_ROOM_ATTACHMENT_MAX_BYTES; '
          + 'the bytes must be of that type; optional x-filename); attach it with a message\'s attachmentIds within 24 h',
      },
    }, async (request, reply) => {
      const upload = declaredUpload(request, deps.config.roomAttachmentMaxBytes);
      return reply.code(201).send({ data: await uploadAttachment(ds, store, endUserOnly(request), request.params.id, upload) });
    });
  });

  app.get('/api/v1/rooms/:id/attachments/:attachmentId', {
    schema: {
      params: pathParams('id', 'attachmentId'),
      response: { 200: fileOf('*/*', 'the file, as a download'), 206: fileOf('*/*', 'a byte range'), 416: noContent('the range is outside the file') },
    },
    config: { ...ROOMS_ROUTE, auth: 'identity', operationId: 'getRoomAttachment',
      summary: 'Download an attachment: one\'s own upload, or one on a message whose content one sees' },
  }, async (request, reply) => {
    const attachment = await readableAttachment(ds, endUserOnly(request), request.params.id, request.params.attachmentId);
    reply.header('content-disposition', attachmentDisposition(attachment.filename)).header('x-content-type-options', 'nosniff')
      .header('cache-control', 'private, no-store').header('content-security-policy', "default-src 'none'").header('accept-ranges', 'bytes')
      .type(attachment.contentType === 'text/plain' ? 'text/plain; charset=utf-8' : attachment.contentType);
    return sendStoredRange(reply, request.headers.range, attachment, store);
  });

  app.put('/api/v1/rooms/:id/polls/:pollId/responses', {
    schema: {
      params: pathParams('id', 'pollId'),
      body: pollResponseBody,
      response: {
        200: dataOf(pollSchema),
        403: CALLER_NOT_JOINED,
        409: errorOf('CONFLICT: the poll\'s message was deleted, or the room is archived'),
      },
    },
    config: { ...ROOMS_ROUTE, auth: 'identity', operationId: 'respondToRoomPoll',
      summary: 'Answer a poll (one answer per member; a later answer replaces it)' },
  }, async (request) => ({
    data: await respondToPoll(ds, endUserOnly(request), request.params.id, request.params.pollId, request.body.optionIndex),
  }));

  app.post('/api/v1/rooms/:id/moderation/reports', {
    schema: {
      params: idParams,
      body: reportBody,
      response: {
        201: dataOf(moderationCaseSchema),
        200: dataOf(moderationCaseSchema).meta({ description: 'the caller had reported this message already; counted once' }),
        403: errorOf('FORBIDDEN: one\'s own message, or not joined'),
        409: errorOf('CONFLICT: the message was deleted, or the room is archived'),
      },
    },
    config: {
      ...ROOMS_ROUTE,
      auth: 'identity', operationId: 'reportRoomMessage',
      summary: 'Report another\'s message; at SV_ROOM_REPORT_THRESHOLD distinct reporters it is hidden and the case actioned',
    },
  }, async (request, reply) => {
    const { created, moderationCase } = await reportMessage(ds, endUserOnly(request), request.params.id, request.body, deps.config.roomReportThreshold);
    return reply.code(created ? 201 : 200).send({ data: moderationCase });
  });

  app.post('/api/v1/rooms/:id/moderation/:caseId/appeals', {
    schema: {
      params: pathParams('id', 'caseId'),
      body: appealBody,
      response: {
        201: dataOf(appealSchema),
        403: errorOf('FORBIDDEN: not the message\'s author'),
        409: errorOf('CONFLICT: the case is not actioned, or the room is archived'),
      },
    },
    config: { ...ROOMS_ROUTE, auth: 'identity', operationId: 'appealRoomModeration',
      summary: 'The author appeals a hidden message; a person decides through its appeal approval' },
  }, async (request, reply) => reply.code(201).send({
    data: await appealCase(ds, endUserOnly(request), request.params.id, request.params.caseId, request.body.statement),
  }));
}
