import { array, boolean, number, object, string } from 'yup';
import { QUESTION_KINDS } from '../../db/entities/collection-question-version';
import { REQUEST_CHANNELS } from '../../db/entities/proof-request';
import { FOLLOW_UPS, IDENTITY_FIELDS, MEDIA_KINDS, RATING_SCALES } from '../../db/rules/collection-flow';
import { openObject, strictObject } from '../plugins/validation';
import { errorOf, timestamp } from '../plugins/responses';
import { OWNERS_AND_ADMINS } from '../plugins/auth';

/** Who may do what in the setup routes: every teammate reads, owners and admins write. */
export const readers = { auth: 'session' as const };
export const writers = OWNERS_AND_ADMINS;

const httpsOrigin = string().max(200).matches(/^https:\/\/[A-Za-z0-9.-]+(:\d{1,5})?$/, 'must be an https origin such as https://app.example.com');

export const definitionSchema = strictObject({
  title: string().min(1).max(180),
  intro: string().max(2000),
  mediaKinds: array(string().oneOf([...MEDIA_KINDS]).required()).min(1).max(4),
  questions: array(strictObject({
    questionId: string().required().max(100),
    version: number().integer().min(1).required(),
    required: boolean().required(),
  }).required()).max(20),
  rating: strictObject({ scale: string().oneOf([...RATING_SCALES]).required(), required: boolean().required() }).nullable().default(undefined),
  routing: object().test('follow-ups', 'each band maps to support_room, check_in or story_invite', (value) =>
    value === undefined || Object.values(value as Record<string, unknown>).every((v) => (FOLLOW_UPS as readonly unknown[]).includes(v))),
  consentTemplateVersionId: string().max(100).nullable(),
  identityFields: array(string().oneOf([...IDENTITY_FIELDS]).required()).max(6),
  allowedOrigins: array(httpsOrigin.required()).max(20),
  maxVideoSeconds: number().integer().min(10).max(600),
  welcomeVideoId: string().max(100).nullable(),
  thankYou: string().max(2000),
}).default(undefined);

export const flowSummary = object({
  id: string().required(),
  publicId: string().required(),
  productId: string().required(),
  name: string().required(),
  state: string().required(),
  liveVersionId: string().nullable().defined(),
  draftRevision: number().required(),
  liveUrl: string().required(),
  consentTemplate: object({
    id: string().required(), templateId: string().required(), name: string().required(), version: number().required(), wordingHash: string().required(),
  }).nullable().defined(),
  allowance: object({ month: string().required(), used: number().required(), limit: number().required() }).required(),
  createdAt: timestamp().required(),
  updatedAt: timestamp().required(),
});

export const flowVersionSchema = object({
  id: string().required(),
  flowId: string().required(),
  versionNumber: number().required(),
  definition: openObject().required(),
  incentive: openObject().required(),
  contentHash: string().required(),
  publishedAt: timestamp().required(),
});

export const flowDetail = flowSummary.shape({
  definition: openObject().required(),
  incentive: openObject().required(),
  versions: array(object({ id: string().required(), versionNumber: number().required(), contentHash: string().required(),
    publishedAt: timestamp().required() })).defined(),
  version: flowVersionSchema.nullable().defined(),
});

export const questionVersionSchema = object({
  id: string().required(),
  questionId: string().required(),
  version: number().required(),
  text: string().required(),
  kind: string().oneOf([...QUESTION_KINDS]).required(),
  helpText: string().nullable().defined(),
  options: array(string().defined()).nullable().defined(),
  createdAt: timestamp().required(),
});

export const questionSchema = object({
  id: string().required(),
  state: string().required(),
  latestVersion: questionVersionSchema.required(),
  usage: object({ flows: number().required(), liveFlows: number().required() }).required(),
  createdAt: timestamp().required(),
  updatedAt: timestamp().required(),
});

export const templateVersionSchema = object({
  id: string().required(),
  templateId: string().required(),
  productId: string().required(),
  name: string().required(),
  version: number().required(),
  wording: string().required(),
  wordingHash: string().required(),
  terms: openObject().required(),
  createdAt: timestamp().required(),
});

export const recipientSchema = strictObject({
  email: string().email().max(320),
  endUserId: string().min(1).max(200),
  personRef: string().min(1).max(200),
  name: string().max(200),
}).test('someone', 'name the recipient by email, endUserId or personRef', (r) => !r || Boolean(r.email || r.endUserId || r.personRef));

export const requestSchema = object({
  id: string().required(),
  productId: string().required(),
  flowId: string().required(),
  formId: string().required(),
  flowVersionId: string().required(),
  channel: string().oneOf([...REQUEST_CHANNELS]).required(),
  recipient: openObject().required(),
  recipientId: string().nullable().defined(),
  message: string().nullable().defined(),
  status: string().required(),
  expiresInDays: number().required(),
  remindAfterDays: number().nullable().defined(),
  opportunityId: string().nullable().defined(),
  bulkId: string().nullable().defined(),
  createdBy: openObject().required(),
  sentAt: timestamp().nullable().defined(),
  remindedAt: timestamp().nullable().defined(),
  expiresAt: timestamp().nullable().defined(),
  respondedAt: timestamp().nullable().defined(),
  closedAt: timestamp().nullable().defined(),
  createdAt: timestamp().required(),
  updatedAt: timestamp().required(),
});

/** A request as a key is answered it (docs/ai.md#requests-and-reply-capture): the recipient by id only; no key scope grants their e-mail or name. */
export const keyRequestSchema = requestSchema.omit(['recipient']);

/** An ask candidate (docs/integrations.md#rules-as-built), the same wherever it is read. */
export const candidateSchema = object({
  id: string().required(),
  productId: string().required(),
  trigger: string().required(),
  personRef: string().nullable().defined(),
  endUserId: string().nullable().defined(),
  momentId: string().nullable().defined(),
  valueEventId: string().nullable().defined(),
  strength: number().nullable().defined(),
  state: string().oneOf(['proposed', 'accepted', 'dismissed', 'expired'] as const).required(),
  requestId: string().nullable().defined(),
  decidedAt: timestamp().nullable().defined(),
  createdAt: timestamp().required(),
  expiresAt: timestamp().required(),
});

export const routingSchema = object({
  id: string().required(),
  productId: string().required(),
  proofItemId: string().required(),
  flowId: string().nullable().defined(),
  flowVersionId: string().nullable().defined(),
  requestId: string().nullable().defined(),
  scale: string().required(),
  score: number().required(),
  band: string().required(),
  followUp: string().required(),
  state: string().required(),
  roomId: string().nullable().defined(),
  note: string().nullable().defined(),
  createdAt: timestamp().required(),
  updatedAt: timestamp().required(),
});

export const correctionSchema = object({
  id: string().required(),
  productId: string().required(),
  proofItemId: string().required(),
  versionId: string().nullable().defined(),
  message: string().required(),
  status: string().required(),
  note: string().nullable().defined(),
  closedAt: timestamp().nullable().defined(),
  createdAt: timestamp().required(),
});

export const domainSchema = object({
  id: string().required(),
  flowId: string().required(),
  hostname: string().required(),
  status: string().required(),
  records: array(object({ type: string().required(), name: string().required(), value: string().required() })).defined(),
  verifiedAt: timestamp().nullable().defined(),
  lastCheckedAt: timestamp().nullable().defined(),
  lastError: string().nullable().defined().meta({ description: 'what the last DNS check missed; null once verified or before any check' }),
  createdAt: timestamp().required(),
});

/** Refusals several routes document alike. */
export const STATE_CONFLICT = errorOf('CONFLICT, ALREADY_USED, OPTED_OUT or REVOKED_FINAL: the resource is not in a state that allows this');
export const NOT_FOUND_FOR_TENANT = errorOf('NOT_FOUND: no such resource for this tenant');
export const LINK_UNAUTHORIZED = errorOf('UNAUTHORIZED: the link token or draft session is missing, unknown or expired');
export const LINK_EXPIRED = errorOf('EXPIRED: the link, draft or upload session has expired');
