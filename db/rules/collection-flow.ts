import { sha256OfCanonical } from './canonical-json';

export const MEDIA_KINDS = ['text', 'audio', 'video', 'image'] as const;
export const RATING_SCALES = ['nps', 'five_star'] as const;
export type RatingScale = (typeof RATING_SCALES)[number];
export const FOLLOW_UPS = ['support_room', 'check_in', 'story_invite'] as const;
export type FollowUp = (typeof FOLLOW_UPS)[number];
export const IDENTITY_FIELDS = ['name', 'company', 'title', 'photo', 'logo', 'location'] as const;
export const INCENTIVE_KINDS = ['gift_card', 'account_credit', 'donation', 'feature_unlock'] as const;
export const INCENTIVE_APPLIES_TO = ['any_response', 'submitted_story'] as const;

export interface FlowQuestionRef {
  questionId: string;
  version: number;
  required: boolean;
}

export interface FlowDefinition {
  title: string;
  intro: string;
  mediaKinds: string[];
  questions: FlowQuestionRef[];
  rating: { scale: RatingScale; required: boolean } | null;
  routing: Record<string, string>;
  consentTemplateVersionId: string | null;
  identityFields: string[];
  allowedOrigins: string[];
  maxVideoSeconds: number;
  welcomeVideoId: string | null;
  thankYou: string;
}

export type Incentive =
  | { offered: false }
  | { offered: true; kind: string; description: string; unlockKey: string | null; appliesTo: string };

/** Bands of each scale, lowest first, with the score range and default follow-up (docs/collection.md#routing-corrections-approval-links). */
export const BANDS: Record<RatingScale, Array<{ band: string; min: number; max: number; followUp: FollowUp }>> = {
  nps: [
    { band: 'detractor', min: 0, max: 6, followUp: 'support_room' },
    { band: 'passive', min: 7, max: 8, followUp: 'check_in' },
    { band: 'promoter', min: 9, max: 10, followUp: 'story_invite' },
  ],
  five_star: [
    { band: 'negative', min: 1, max: 2, followUp: 'support_room' },
    { band: 'neutral', min: 3, max: 3, followUp: 'check_in' },
    { band: 'positive', min: 4, max: 5, followUp: 'story_invite' },
  ],
};

export const DEFAULT_MAX_VIDEO_SECONDS = 120;

export function defaultRouting(scale: RatingScale): Record<string, string> {
  return Object.fromEntries(BANDS[scale].map((b) => [b.band, b.followUp]));
}

export function emptyDefinition(name: string): FlowDefinition {
  return {
    title: name,
    intro: '',
    mediaKinds: ['text'],
    questions: [],
    rating: null,
    routing: {},
    consentTemplateVersionId: null,
    identityFields: ['name'],
    allowedOrigins: [],
    maxVideoSeconds: DEFAULT_MAX_VIDEO_SECONDS,
    welcomeVideoId: null,
    thankYou: 'Thank you for sharing your story.',
  };
}

/** A saved definition: what was given over the defaults, and default routing for a rating that names none. */
export function completeDefinition(name: string, given: Partial<FlowDefinition> | undefined): FlowDefinition {
  const definition = { ...emptyDefinition(name), ...(given ?? {}) };
  if (definition.rating && Object.keys(definition.routing).length === 0) definition.routing = defaultRouting(definition.rating.scale);
  return definition;
}

/** The band a score falls in, or null when the score is outside the scale. */
export function bandOf(scale: RatingScale, score: number): { band: string; followUp: FollowUp } | null {
  const found = BANDS[scale].find((b) => Number.isInteger(score) && score >= b.min && score <= b.max);
  return found ? { band: found.band, followUp: found.followUp } : null;
}

/**
 * The follow-up of a scored response under a flow version's routing: every band is routed, so a
 * published version always has an answer; the scale's default covers an unpublished definition.
 */
export function routeScore(definition: Pick<FlowDefinition, 'routing'>, scale: RatingScale, score: number) {
  const found = bandOf(scale, score);
  if (!found) return null;
  return { band: found.band, followUp: definition.routing[found.band] ?? found.followUp };
}

export interface DefinitionIssue { path: string; message: string }

/** Problems publishing would refuse that need nothing but the definition itself (§5.1). */
export function routingIssues(definition: FlowDefinition): DefinitionIssue[] {
  const issues: DefinitionIssue[] = [];
  if (definition.rating) {
    for (const { band } of BANDS[definition.rating.scale]) {
      const followUp = definition.routing[band];
      if (!followUp) issues.push({ path: `definition.routing.${band}`, message: `the ${band} band must be routed: every band is` });
      else if (!(FOLLOW_UPS as readonly string[]).includes(followUp)) {
        issues.push({ path: `definition.routing.${band}`, message: `must be one of ${FOLLOW_UPS.join(', ')}` });
      }
    }
    const known = BANDS[definition.rating.scale].map((b) => b.band);
    for (const band of Object.keys(definition.routing)) {
      if (!known.includes(band)) issues.push({ path: `definition.routing.${band}`, message: `is not a band of ${definition.rating.scale}` });
    }
  }
  if (definition.mediaKinds.length === 0) issues.push({ path: 'definition.mediaKinds', message: 'needs at least one kind' });
  const seen = new Set<string>();
  for (const [i, q] of definition.questions.entries()) {
    if (seen.has(q.questionId)) issues.push({ path: `definition.questions[${i}]`, message: 'a question may appear once' });
    seen.add(q.questionId);
  }
  return issues;
}

/** The `sha256:` hash a published version carries, over its definition and incentive. */
export function flowContentHash(definition: FlowDefinition, incentive: Incentive): string {
  return `sha256:${sha256OfCanonical({ definition, incentive })}`;
}

const CONDITION_WORDS = /\b(rating|rated|score|scores|scored|nps|stars?|band|promoters?|detractors?|passives?|sentiment|positive|negative|happy|satisfied|unhappy|5[- ]star|five[- ]star)\b/i;

/**
 * Why an incentive's description would condition the reward on how the customer feels, or null. The
 * reward must never depend on the rating, band or sentiment (no review gating).
 */
export function incentiveConditionReason(description: string): string | null {
  const match = CONDITION_WORDS.exec(description);
  return match ? `the reward may not depend on a rating, band or sentiment ("${match[0]}")` : null;
}
