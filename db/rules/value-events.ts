import type { FieldIssue } from '../../runtime/service-error';

export const VALUE_EVENT_TYPES = ['milestone', 'resolved_ticket', 'score', 'shipped_feature', 'purchase', 'plan_upgrade'] as const;
export type ValueEventType = (typeof VALUE_EVENT_TYPES)[number];

export const EVENT_ID_PATTERN = /^[A-Za-z0-9._:-]{8,200}$/;
const DATE_TIME_WITH_ZONE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i;
const MAX_FUTURE_MS = 5 * 60_000;

export const SCORE_SCALES: Record<string, [number, number]> = { nps: [0, 10], csat: [1, 5], ces: [1, 7], rating: [0, 5] };

export interface ValueEventInput {
  eventId: string;
  type: ValueEventType;
  occurredAt: string;
  personRef?: string;
  endUserId?: string;
  properties?: Record<string, unknown>;
}

const REQUIRED: Record<ValueEventType, string[]> = {
  milestone: ['name'],
  resolved_ticket: ['ticketId'],
  score: ['scale', 'value'],
  shipped_feature: ['featureId'],
  purchase: ['amount', 'currency'],
  plan_upgrade: ['fromPlan', 'toPlan'],
};

/** The rules of a value event body that a schema cannot say: dates, the person, and per-type properties. */
export function valueEventIssues(body: ValueEventInput, now: number): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const at = Date.parse(body.occurredAt);
  if (!DATE_TIME_WITH_ZONE.test(body.occurredAt) || Number.isNaN(at)) {
    issues.push({ path: 'occurredAt', message: 'must be a date-time with a zone (e.g. 2026-01-31T10:00:00Z)' });
  } else if (at > now + MAX_FUTURE_MS) {
    issues.push({ path: 'occurredAt', message: 'must not be more than 5 minutes in the future' });
  }
  if (body.personRef === undefined && body.endUserId === undefined) {
    issues.push({ path: 'personRef', message: 'personRef or endUserId is required' });
  }
  const props = body.properties ?? {};
  const keys = Object.keys(props);
  if (keys.length > 50) issues.push({ path: 'properties', message: 'at most 50 properties' });
  for (const key of keys) {
    const v = props[key];
    const ok = v === null || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v))
      || (typeof v === 'string' && v.length <= 1000);
    if (!ok) issues.push({ path: `properties.${key}`, message: 'must be a string of at most 1000 characters, a number, a boolean or null' });
  }
  for (const key of REQUIRED[body.type] ?? []) {
    if (props[key] === undefined || props[key] === null) issues.push({ path: `properties.${key}`, message: `is required for type ${body.type}` });
  }
  const str = (key: string) => typeof props[key] === 'string' && (props[key] as string).length > 0;
  const num = (key: string) => typeof props[key] === 'number' && Number.isFinite(props[key]);
  switch (body.type) {
    case 'milestone':
      if (props.name !== undefined && !str('name')) issues.push({ path: 'properties.name', message: 'must be a non-empty string' });
      break;
    case 'resolved_ticket':
      if (props.ticketId !== undefined && !str('ticketId') && !num('ticketId')) issues.push({ path: 'properties.ticketId',
        message: 'must be a string or number' });
      break;
    case 'score': {
      const scale = SCORE_SCALES[String(props.scale)];
      if (props.scale !== undefined && !scale) issues.push({ path: 'properties.scale', message: 'must be one of nps, csat, ces, rating' });
      if (props.value !== undefined && (!num('value') || (scale && ((props.value as number) < scale[0] || (props.value as number) > scale[1])))) {
        issues.push({ path: 'properties.value', message: scale ? `must be a number from ${scale[0]} to ${scale[1]}` : 'must be a number' });
      }
      break;
    }
    case 'shipped_feature':
      if (props.featureId !== undefined && !str('featureId')) issues.push({ path: 'properties.featureId', message: 'must be a feature id' });
      break;
    case 'purchase':
      if (props.amount !== undefined && (!num('amount') || (props.amount as number) < 0)) issues.push({ path: 'properties.amount',
        message: 'must be a number ≥ 0 in minor units' });
      if (props.currency !== undefined && !(typeof props.currency === 'string' && /^[A-Za-z]{3}$/.test(props.currency))) {
        issues.push({ path: 'properties.currency', message: 'must be a 3-letter currency code' });
      }
      break;
    case 'plan_upgrade':
      for (const key of ['fromPlan', 'toPlan']) {
        if (props[key] !== undefined && !str(key)) issues.push({ path: `properties.${key}`, message: 'must be a non-empty string' });
      }
      break;
  }
  return issues;
}

const BASE_STRENGTH: Record<ValueEventType, number> = {
  milestone: 80, plan_upgrade: 80, shipped_feature: 70, purchase: 60, resolved_ticket: 60, score: 60,
};

/**
 * Strength of a value event: its type's base, +20 for a shipped feature the end user voted for or
 * follows, +10 for each of up to three earlier events of the person in the 30 days before, at most
 * 100. A score's value never counts: asks are not gated on sentiment.
 */
export function valueEventStrength(type: ValueEventType, recentEvents: number, featureInterest: boolean): number {
  const base = BASE_STRENGTH[type] + (type === 'shipped_feature' && featureInterest ? 20 : 0);
  return Math.min(100, base + 10 * Math.min(3, recentEvents));
}
