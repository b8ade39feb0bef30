import { array, boolean, number, object, string } from 'yup';
import { FEATURE_STATES } from '../../db/entities/feature';
import { ANALYSIS_STATES, SIGNAL_CATEGORIES } from '../../db/entities/signal';
import { THREAD_STATES } from '../../db/entities/thread';
import { MESSAGE_VISIBILITIES } from '../../db/entities/thread-message';
import { named, timestamp } from '../plugins/responses';

/** Response schemas of the customer-loop routes: signals, threads, features, releases, the inbox. */

export const signalReceiptSchema = named('SignalReceipt', object({
  id: string().required(),
  threadId: string().required(),
  state: string().required().oneOf([...THREAD_STATES]).meta({ description: 'the thread\'s state' }),
  replayed: boolean().required().meta({ description: 'true when the idempotencyKey was seen before (200)' }),
}), { id: 'sig_1k82cn82fkkknwz0k39hsrbq5', threadId: 'thr_1k82cn82fpypyk0psvsa1b25e', state: 'open', replayed: false });

const signalFields = {
  id: string().required(),
  threadId: string().required(),
  endUserId: string().required(),
  category: string().oneOf([...SIGNAL_CATEGORIES]).required(),
  title: string().required(),
  body: string().required(),
  urgency: string().required(),
  sentiment: string().nullable().defined(),
  summary: string().nullable().defined(),
  analysisState: string().required().oneOf([...ANALYSIS_STATES]).meta({
    description: 'pending, analyzing, done, failed; waiting: over the monthly allowance; skipped: no AI provider was configured at intake, so no analysis runs',
  }),
  overAllowance: boolean().required(),
  createdAt: timestamp().required(),
  updatedAt: timestamp().required(),
};

export const signalSchema = named('Signal', object(signalFields), {
  id: 'sig_1k82cn82fkkknwz0k39hsrbq5', threadId: 'thr_1k82cn82fpypyk0psvsa1b25e', endUserId: 'user-1', category: 'support',
  title: 'Export is slow', body: 'Exports take minutes for big projects.', urgency: 'high', sentiment: 'negative',
  summary: 'Exports are slow for large projects.', analysisState: 'done', overAllowance: false,
  createdAt: '2026-11-22T19:46:23.439Z', updatedAt: '2026-11-22T19:46:24.701Z',
});

export const signalWithFeaturesSchema = named('SignalWithFeatures', object({
  ...signalFields,
  candidateFeatureIds: array(string().defined()).defined().meta({ description: 'features the analysis proposed' }),
  features: array(object({
    id: string().required(), title: string().required(), state: string().required().oneOf([...FEATURE_STATES]), score: number().required(),
  })).defined().meta({ description: 'features the signal is linked to as evidence' }),
}));

const threadFields = {
  id: string().required(),
  endUserId: string().required(),
  subject: string().required(),
  state: string().required().oneOf([...THREAD_STATES]),
  ownerId: string().nullable().defined(),
  nextUpdateAt: timestamp().nullable().defined(),
  createdAt: timestamp().required(),
  updatedAt: timestamp().required(),
};

export const threadSchema = named('Thread', object(threadFields), {
  id: 'thr_1k82cnefd9trj2q5ztbtjc6kj', endUserId: 'user-1', subject: 'Export is slow', state: 'open', ownerId: null,
  nextUpdateAt: null, createdAt: '2026-11-22T19:46:29.997Z', updatedAt: '2026-11-22T19:46:29.997Z',
});

const messageFields = {
  id: string().required(),
  authorType: string().required().oneOf(['end_user', 'teammate'] as const),
  body: string().required(),
  createdAt: timestamp().required(),
};

export const threadMessageSchema = named('ThreadMessage', object({
  ...messageFields,
  visibility: string().oneOf([...MESSAGE_VISIBILITIES]),
}));

export const threadWithMessagesSchema = named('ThreadWithMessages', object({
  ...threadFields,
  messages: array(object(messageFields)).defined().meta({ description: 'customer-visible messages, oldest first' }),
}));

const part = () => object({ count: number().required(), weight: number().required(), points: number().required() }).required();

export const scoreBreakdownSchema = named('ScoreBreakdown', object({
  formula: string().required(),
  asOf: timestamp().required(),
  votes: part(),
  signals: object({
    count: number().required(), weight: number().required(), points: number().required(),
    items: array(object({
      signalId: string().required(),
      category: string().required(),
      urgency: string().required(),
      sentiment: string().nullable().defined(),
      ageDays: number().required(),
      weights: object({ category: number().required(), urgency: number().required(), sentiment: number().required(), recency: number().required() }).required(),
      points: number().required(),
    })).defined(),
  }).required(),
  distinctEndUsers: part(),
  total: number().required(),
}));

const featureFields = {
  id: string().required(),
  title: string().required(),
  problem: string().required(),
  state: string().required().oneOf([...FEATURE_STATES]),
  score: number().required(),
  scoreBreakdown: scoreBreakdownSchema.defined(),
  voteCount: number().integer().required(),
  followerCount: number().integer().required(),
  signalCount: number().integer().required(),
  publicBoard: boolean().required(),
  mergedInto: string().nullable().defined().meta({ description: 'the surviving feature this one was merged into; null otherwise' }),
  createdAt: timestamp().required(),
  updatedAt: timestamp().required(),
};

export const featureSchema = named('Feature', object(featureFields));

export const featureWithEvidenceSchema = named('FeatureWithEvidence', object({
  ...featureFields,
  evidence: array(object({
    signalId: string().required(),
    threadId: string().required(),
    endUserId: string().required(),
    category: string().required().oneOf([...SIGNAL_CATEGORIES]),
    title: string().required(),
    urgency: string().required(),
    sentiment: string().nullable().defined(),
    summary: string().nullable().defined(),
    createdAt: timestamp().required(),
  })).defined().meta({ description: 'linked signals, most recent first' }),
}));

export const voteSchema = named('FeatureVote', object({
  featureId: string().required(),
  endUserId: string().required(),
  voted: boolean().required(),
  following: boolean().required(),
  score: number().required(),
  scoreBreakdown: scoreBreakdownSchema.defined(),
  voteCount: number().integer().required(),
  followerCount: number().integer().required(),
}));

export const releaseSchema = named('Release', object({
  id: string().required(),
  productId: string().required(),
  title: string().required(),
  featureIds: array(string().defined()).defined(),
  recipientCount: number().integer().required().meta({ description: 'voters and followers who got an inbox item' }),
  createdAt: timestamp().required(),
}));

export const releaseReceiptSchema = named('ReleaseReceipt', object({
  releaseId: string().required(),
  endUserId: string().required(),
  fixed: boolean().required(),
  comment: string().nullable().defined(),
  recordedAt: timestamp().required(),
}));

export const inboxItemSchema = named('InboxItem', object({
  id: string().required(),
  threadId: string().nullable().defined(),
  releaseId: string().nullable().defined(),
  roomId: string().nullable().defined().meta({ description: 'the room of a release receipt' }),
  controlLinkExpiresAt: timestamp().nullable().defined()
    .meta({ description: 'set when the item delivers the end user a person link to their stories: redeem it with POST /api/v1/inbox/{id}/control-link until ' +
      'then' }),
  subject: string().required(),
  preview: string().required(),
  createdAt: timestamp().required(),
  readAt: timestamp().nullable().defined(),
}));

export const inboxPageSchema = named('InboxPage', object({
  unread: number().integer().required(),
  nextCursor: string().nullable().defined().meta({ description: 'pass as before for the next (older) page' }),
  items: array(inboxItemSchema.defined()).defined(),
}));

export const inboxReadSchema = named('InboxReadResult', object({
  unread: number().integer().required(),
  marked: number().integer().required(),
}));

export const similarCandidateSchema = named('SimilarCandidate', object({
  type: string().required().oneOf(['feature', 'signal'] as const),
  id: string().required(),
  title: string().required(),
  score: number().required().min(0).max(1).meta({ description: 'how likely a duplicate, 0 to 1' }),
  matched: array(string().required()).defined().meta({ description: 'the normalised words (stems) both texts share, typos included' }),
  suggested: boolean().required().meta({ description: 'score reached SV_DUPLICATE_THRESHOLD' }),
}));

export const featureMergeSchema = named('FeatureMerge', object({
  feature: featureSchema.required(),
  into: featureSchema.required(),
  moved: object({
    votes: number().integer().required().meta({ description: 'votes the surviving feature gained (an end user who voted on both counts once)' }),
    followers: number().integer().required(),
    signals: number().integer().required(),
  }).required(),
}));

export const teamThreadSchema = named('TeamThread', object({
  ...threadFields,
  messages: array(object({ ...messageFields, visibility: string().required().oneOf([...MESSAGE_VISIBILITIES]) })).defined()
    .meta({ description: 'every message, internal notes included, oldest first' }),
  duplicateSuggestion: similarCandidateSchema.nullable().defined()
    .meta({ description: 'the best similar feature or signal of the thread\'s signal once its score reaches SV_DUPLICATE_THRESHOLD; null otherwise' }),
}));
