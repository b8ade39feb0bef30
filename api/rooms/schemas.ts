import { array, boolean, number, object, string } from 'yup';
import { APPROVAL_KINDS, APPROVAL_STATUSES } from '../../db/entities/room-approval';
import { JOB_STATUSES, JOB_TYPES } from '../../db/entities/room-job';
import { PROMISE_STATES } from '../../db/entities/room-promise';
import { CASE_STATES, REPORT_REASONS } from '../../db/entities/room-moderation-case';
import { ATTACHMENT_TYPES } from '../../db/rules/room-rules';
import { RUN_STATUSES } from '../../db/entities/room-agent-run';
import { MEMBER_STATES } from '../../db/entities/room-member';
import { ROOM_KINDS, ROOM_STATUSES, ROOM_VISIBILITIES } from '../../db/entities/room';
import { anyObject, errorOf, named, timestamp } from '../plugins/responses';

const visibility = () => string().oneOf(['customer', 'internal'] as const).required();
const principal = object({ type: string().required(), principalId: string().required() });

export const memberSchema = named('RoomMember', object({
  principalId: string().required(),
  type: string().oneOf(['end_user', 'teammate', 'agent'] as const).required(),
  endUserId: string().nullable().defined()
    .meta({ description: 'null unless an end user; an end user reads another member\'s anonymous (anon_...) id as null' }),
  teammateId: string().nullable().defined(),
  alias: string().nullable().defined(),
  role: string().oneOf(['owner', 'customer', 'teammate', 'agent'] as const).required(),
  visibility: string().oneOf(['external', 'internal'] as const).required(),
  state: string().oneOf([...MEMBER_STATES]).required(),
  invitedAt: timestamp().required(),
  joinedAt: timestamp().nullable().defined(),
  readMarker: number().integer().nullable().defined().meta({ description: 'the caller\'s own record only; null on others' }),
}));

export const roomSchema = named('Room', object({
  id: string().required(),
  title: string().required(),
  kind: string().oneOf([...ROOM_KINDS]).required(),
  purpose: string().nullable().defined(),
  status: string().oneOf([...ROOM_STATUSES]).required(),
  visibility: string().oneOf([...ROOM_VISIBILITIES]).required(),
  createdBy: principal.required(),
  threadIds: array(string().defined()).defined(),
  featureIds: array(string().defined()).defined(),
  headSeq: number().integer().required(),
  createdAt: timestamp().required(),
  updatedAt: timestamp().required(),
  membership: memberSchema.nullable().defined().meta({ description: 'the end user\'s own member record (identity callers only)' }),
}));

export const attachmentSchema = named('RoomAttachment', object({
  id: string().required(),
  roomId: string().required(),
  filename: string().nullable().defined(),
  contentType: string().oneOf([...ATTACHMENT_TYPES]).required(),
  size: number().integer().required(),
  sha256: string().required(),
  uploadedBy: string().required().meta({ description: 'the uploader\'s principalId' }),
  messageId: string().nullable().defined(),
  createdAt: timestamp().required(),
}));

export const pollSchema = named('RoomPoll', object({
  id: string().required(),
  roomId: string().required(),
  options: array(object({
    index: number().integer().required(),
    text: string().defined().meta({ description: '"" while the poll\'s message is withheld from this reader' }),
    count: number().integer().required(),
  })).defined(),
  totalResponses: number().integer().required(),
  myOptionIndex: number().integer().nullable().defined(),
}));

export const reactionToggleSchema = named('RoomReactionToggle', object({
  messageId: string().required(),
  emoji: string().required(),
  reacted: boolean().required().meta({ description: 'true: the reaction was added; false: the caller\'s same reaction was removed' }),
  count: number().integer().required(),
}));

export const moderationCaseSchema = named('RoomModerationCase', object({
  id: string().required(),
  roomId: string().required(),
  messageId: string().required(),
  reason: string().oneOf([...REPORT_REASONS]).required(),
  state: string().oneOf([...CASE_STATES]).required(),
  reportCount: number().integer().required(),
  createdAt: timestamp().required(),
}));

export const appealSchema = named('RoomAppeal', object({
  id: string().required(),
  roomId: string().required(),
  caseId: string().required(),
  statement: string().required(),
  approvalId: string().required(),
}));

export const messageSchema = named('RoomMessage', object({
  id: string().required(),
  roomId: string().required(),
  seq: number().integer().required(),
  author: principal.required(),
  kind: string().oneOf(['text', 'poll', 'decision'] as const).required(),
  body: string().defined().meta({ description: '"" once deleted, or hidden from this reader' }),
  visibility: visibility(),
  attachments: array(attachmentSchema).defined().meta({ description: '[] while the content is withheld from this reader' }),
  poll: pollSchema.nullable().defined(),
  reactions: array(object({ emoji: string().required(), count: number().integer().required(), me: boolean().required() })).defined(),
  hidden: boolean().required(),
  moderationCaseId: string().nullable().defined().meta({ description: 'named to the author and internal readers only' }),
  editedAt: timestamp().nullable().defined(),
  deletedAt: timestamp().nullable().defined(),
  createdAt: timestamp().required(),
}));

export const roomEventSchema = named('RoomEvent', object({
  seq: number().integer().required(),
  type: string().required(),
  visibility: visibility(),
  actor: object({ type: string().oneOf(['end_user', 'teammate', 'agent', 'key', 'system'] as const).required(), id: string().nullable().defined() }).required(),
  createdAt: timestamp().required(),
  data: anyObject().required().meta({ description: 'roomId, seq and the change; an entry about a message carries it as the reader may see it' }),
}));

export const canvasSchema = named('RoomCanvas', object({
  roomId: string().required(),
  version: number().integer().required(),
  content: string().defined(),
  updatedAt: timestamp().required(),
  updatedBy: object({ type: string().required(), id: string().nullable().defined() }).nullable().defined(),
}));

const step = object({
  type: string().oneOf(['model_call', 'approval', 'side_effect'] as const).required(),
  status: string().oneOf(['in_progress', 'completed', 'failed', 'cancelled', 'skipped'] as const).required(),
  approvalId: string(),
  resultId: string(),
  startedAt: timestamp().required(),
  completedAt: timestamp().nullable().defined(),
});

export const agentRunSchema = named('AgentRun', object({
  id: string().required(),
  roomId: string().required(),
  alias: string().required(),
  status: string().oneOf([...RUN_STATUSES]).required(),
  visibility: visibility(),
  input: string().required(),
  startedBy: object({ type: string().oneOf(['end_user', 'key'] as const).required(), id: string().required() }).required(),
  steps: array(step).defined(),
  sideEffect: object({
    action: string().oneOf(['post_message', 'update_canvas'] as const).required(),
    approvalId: string().nullable().defined(),
    executedAt: timestamp().nullable().defined(),
    resultId: string().nullable().defined(),
  }).nullable().defined(),
  lastError: object({ code: string().required(), message: string().required() }).nullable().defined(),
  workflowId: string().required(),
  createdAt: timestamp().required(),
  startedAt: timestamp().nullable().defined(),
  completedAt: timestamp().nullable().defined(),
  cancelledAt: timestamp().nullable().defined(),
  failedAt: timestamp().nullable().defined(),
}));

export const approvalSchema = named('RoomApproval', object({
  id: string().required(),
  roomId: string().required(),
  kind: string().oneOf([...APPROVAL_KINDS]).required(),
  status: string().oneOf([...APPROVAL_STATUSES]).required(),
  subjectId: string().required(),
  action: object({ type: string().required(), preview: string().defined() }).required(),
  requestedBy: object({ type: string().required(), id: string().required() }).required(),
  decidedBy: object({ teammateId: string().required() }).nullable().defined(),
  decidedAt: timestamp().nullable().defined(),
  note: string().nullable().defined(),
  expiresAt: timestamp().nullable().defined(),
  createdAt: timestamp().required(),
}));

export const jobSchema = named('RoomJob', object({
  id: string().required(),
  roomId: string().required(),
  type: string().oneOf([...JOB_TYPES]).required(),
  params: anyObject().required(),
  status: string().oneOf([...JOB_STATUSES]).required(),
  result: anyObject().nullable().defined().meta({ description: 'recipientCount; promiseId and approvalId; promiseId; sessionId' }),
  error: object({ code: string().required(), message: string().required() }).nullable().defined(),
  createdAt: timestamp().required(),
  completedAt: timestamp().nullable().defined(),
}));

export const promiseSchema = named('RoomPromise', object({
  id: string().required(),
  roomId: string().required(),
  text: string().required(),
  dueAt: timestamp().required(),
  state: string().oneOf([...PROMISE_STATES]).required(),
  approvalId: string().required(),
  approvedAt: timestamp().nullable().defined(),
  completedAt: timestamp().nullable().defined(),
  missedAt: timestamp().nullable().defined(),
}));

export const solveSessionSchema = named('RoomSolveSession', object({
  id: string().required(),
  roomId: string().required(),
  state: string().oneOf(['open', 'ended'] as const).required(),
  recordingTerms: object({ version: string().required(), text: string().required(), sha256: string().required() }).required(),
  participantCount: number().integer().required(),
  createdAt: timestamp().required(),
  endedAt: timestamp().nullable().defined(),
}));

export const solveJoinSchema = named('RoomSolveSessionJoin', object({
  sessionId: string().required(),
  principalId: string().required(),
  joinedAt: timestamp().required(),
  consent: object({
    id: string().required(),
    termsVersion: string().required(),
    termsSha256: string().required(),
    accepted: boolean().required(),
    acceptedAt: timestamp().required(),
  }).required(),
}));

const actorRef = () => object({ type: string().required(), id: string().required() });

export const handoffSchema = named('RoomHandoff', object({
  id: string().required(),
  roomId: string().required(),
  state: string().oneOf(['active', 'ended'] as const).required(),
  requestedBy: actorRef().required().meta({ description: 'a key (its id) or an end user (its principalId)' }),
  reason: string().nullable().defined(),
  teammateId: string().nullable().defined(),
  createdAt: timestamp().required(),
  endedAt: timestamp().nullable().defined(),
  endedBy: actorRef().nullable().defined(),
}));

export const eventsPageSchema = named('RoomEventsPage', object({
  limited: boolean().required(),
  events: array(roomEventSchema).defined(),
  snapshot: object({
    room: roomSchema.required(),
    members: array(memberSchema).defined(),
    messages: array(messageSchema).defined(),
    canvas: object({ version: number().integer().required() }).required(),
    handoff: handoffSchema.nullable().defined().meta({ description: 'the active handoff, or the latest' }),
    promises: array(promiseSchema).defined().meta({ description: 'active, completed and missed' }),
    solveSessions: array(solveSessionSchema).defined().meta({ description: 'open ones' }),
  }).nullable().defined(),
  seq: number().integer().required().meta({ description: 'the last seq scanned: the next `after`' }),
  headSeq: number().integer().required(),
  hasMore: boolean().required(),
}));

export const catchUpSchema = named('RoomCatchUp', object({
  readMarker: number().integer().required(),
  seq: number().integer().required(),
  unreadCount: number().integer().required(),
  messages: array(messageSchema).defined(),
  limited: boolean().required(),
  promises: array(promiseSchema).defined().meta({ description: 'changed after the read marker' }),
  runs: array(agentRunSchema).defined(),
}));

export const searchHitSchema = named('RoomSearchHit', object({
  room: roomSchema.required(),
  matchedMessageIds: array(string().defined()).defined(),
}));

export const invitedSchema = named('RoomInvitation', object({
  invited: array(memberSchema).defined(),
  alreadyMembers: array(string().defined()).defined(),
}));

/** Refusals several routes document alike. */
export const ROOM_ARCHIVED = errorOf('CONFLICT: the room is archived');
export const CALLER_NOT_JOINED = errorOf('FORBIDDEN: the caller has not joined this room');
export const END_USER_NOT_JOINED = errorOf('FORBIDDEN: the end user has not joined this room');
