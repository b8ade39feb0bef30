import { DataSource, EntityManager } from 'typeorm';
import { ProofOpportunity, ProofRequest, ProofValueEvent } from '../entities';
import { Page, PageRequest, pageOf } from '../pagination';
import { Actor, appendProofEvent } from '../proof/proof-ledger';
import { newId } from '../rules/ids';
import { ValueEventInput, valueEventIssues, valueEventStrength } from '../rules/value-events';
import type { ProductTenant } from '../customer-loop/signals';
import { recordSource } from './sources';
import { conflict, notFound, validationFailed } from '../../runtime/service-error';

export interface ValueEventOrigin {
  type: 'api' | 'hook' | 'payment';
  /** The key, hook or connection that reported it. */
  id: string | null;
}

export interface ScoringSettings {
  momentThreshold: number;
  cooldownDays: number;
  opportunityTtlDays: number;
}

export function viewValueEvent(row: ProofValueEvent, replayed: boolean) {
  return {
    id: row.id,
    eventId: row.eventId,
    type: row.type,
    occurredAt: row.occurredAt.toISOString(),
    personRef: row.personRef,
    endUserId: row.endUserId,
    properties: row.properties as Record<string, unknown>,
    origin: { type: row.originType, id: row.originId },
    receivedAt: row.createdAt.toISOString(),
    strength: row.strength,
    momentId: row.momentId,
    opportunityId: row.opportunityId,
    suppressedReason: row.suppressedReason,
    replayed,
  };
}
export type ValueEventView = ReturnType<typeof viewValueEvent>;

/** Proposed past its expiry reads as expired; nothing has to sweep it. */
function opportunityState(row: ProofOpportunity, now = Date.now()): string {
  return row.state === 'proposed' && row.expiresAt.getTime() <= now ? 'expired' : row.state;
}

export function viewOpportunity(row: ProofOpportunity) {
  return {
    id: row.id,
    trigger: row.trigger,
    personRef: row.personRef,
    endUserId: row.endUserId,
    momentId: row.momentId,
    valueEventId: row.valueEventId,
    strength: row.strength,
    state: opportunityState(row),
    requestId: row.requestId,
    decidedAt: row.decidedAt ? row.decidedAt.toISOString() : null,
    createdAt: row.createdAt.toISOString(),
    expiresAt: row.expiresAt.toISOString(),
  };
}

function sourceKindOf(type: string, origin: ValueEventOrigin['type']) {
  if (origin === 'payment') return 'payment' as const;
  if (type === 'resolved_ticket') return 'ticket' as const;
  if (type === 'score') return 'survey_answer' as const;
  return 'signal' as const;
}

function actorOf(origin: ValueEventOrigin): Actor {
  return origin.type === 'api' ? { type: 'service_key', id: origin.id } : { type: 'system', id: origin.id };
}

async function suppression(em: EntityManager, productId: string, personKey: string, cooldownDays: number): Promise<string | null> {
  const [row] = await em.query(
    `SELECT
       EXISTS (SELECT 1 FROM proof_contact_preferences WHERE product_id = $1 AND person_key = $2 AND opted_out_at IS NOT NULL) AS opted_out,
       EXISTS (SELECT 1 FROM proof_opportunities WHERE product_id = $1 AND person_key = $2 AND state = 'proposed' AND expires_at > now()) AS open,
       EXISTS (SELECT 1 FROM proof_contact_preferences WHERE product_id = $1 AND person_key = $2
                 AND last_request_sent_at > now() - make_interval(days => $3)) AS cooldown`,
    [productId, personKey, cooldownDays],
  );
  if (row.opted_out) return 'opted_out';
  if (row.open) return 'open_opportunity';
  if (row.cooldown) return 'cooldown';
  return null;
}

/**
 * Stores a value event once per (product, eventId) and scores it in the same transaction: strength,
 * then a moment when strong enough, then an ask candidate unless the person is suppressed. A repeat
 * of the eventId answers the stored event, whatever its body. Never sends anything.
 */
export async function recordValueEventIn(
  em: EntityManager, tenant: ProductTenant, input: ValueEventInput, origin: ValueEventOrigin, settings: ScoringSettings,
): Promise<{ event: ValueEventView; replayed: boolean }> {
  const repo = em.getRepository(ProofValueEvent);
  const stored = await repo.findOneBy({ productId: tenant.productId, eventId: input.eventId });
  if (stored) return { event: viewValueEvent(stored, true), replayed: true };

  const issues = valueEventIssues(input, Date.now());
  if (issues.length > 0) throw validationFailed(issues);
  const props = input.properties ?? {};
  let featureInterest = false;
  if (input.type === 'shipped_feature') {
    const [feature] = await em.query(`SELECT id FROM features WHERE id = $1 AND product_id = $2`, [props.featureId, tenant.productId]);
    if (!feature) throw validationFailed([{ path: 'properties.featureId', message: 'is not a feature of this product' }]);
    if (input.endUserId) {
      const [interest] = await em.query(
        `SELECT 1 FROM feature_votes WHERE feature_id = $1 AND end_user_id = $2
         UNION ALL SELECT 1 FROM feature_follows WHERE feature_id = $1 AND end_user_id = $2 LIMIT 1`,
        [props.featureId, input.endUserId],
      );
      featureInterest = Boolean(interest);
    }
  }

  const personKey = input.personRef ?? input.endUserId!;
  // One person's events are scored one at a time, so counts and the open-candidate check hold under concurrency.
  await em.query(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [`value-event:${tenant.productId}:${personKey}`]);
  const [{ n }] = await em.query(
    `SELECT count(*)::int AS n FROM proof_value_events
      WHERE product_id = $1 AND person_key = $2 AND occurred_at <= $3 AND occurred_at > $3::timestamptz - interval '30 days'`,
    [tenant.productId, personKey, new Date(input.occurredAt)],
  );
  const strength = valueEventStrength(input.type, n, featureInterest);
  const id = newId('ve');
  const inserted: unknown[] = await em.query(
    `INSERT INTO proof_value_events (id, organization_id, product_id, event_id, type, occurred_at, person_ref, end_user_id,
       person_key, properties, origin_type, origin_id, strength)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
     ON CONFLICT (product_id, event_id) DO NOTHING RETURNING id`,
    [id, tenant.organizationId, tenant.productId, input.eventId, input.type, new Date(input.occurredAt), input.personRef ?? null,
      input.endUserId ?? null, personKey, JSON.stringify(props), origin.type, origin.id, strength],
  );
  if (inserted.length === 0) {
    const winner = await repo.findOneByOrFail({ productId: tenant.productId, eventId: input.eventId });
    return { event: viewValueEvent(winner, true), replayed: true };
  }
  const actor = actorOf(origin);
  const ledger = { organizationId: tenant.organizationId, productId: tenant.productId, proofItemId: null, actor };
  await appendProofEvent(em, {
    ...ledger, eventType: 'proof.value_event.recorded',
    properties: { eventId: input.eventId, valueEventId: id, type: input.type, strength, origin: origin.type },
  });
  await recordSource(em, {
    organizationId: tenant.organizationId, productId: tenant.productId, system: origin.type === 'payment' ? 'payment' : 'value_event',
    externalId: input.eventId, kind: sourceKindOf(input.type, origin.type), capturedAt: new Date(input.occurredAt), title: input.type,
    links: { valueEventId: id }, reuse: 'internal_only', reasons: ['no_consent'], actor, ref: id,
  });
  if (strength >= settings.momentThreshold) {
    const momentId = newId('mom');
    await em.query(
      `INSERT INTO proof_moments (id, organization_id, product_id, value_event_id, type, strength) VALUES ($1, $2, $3, $4, $5, $6)`,
      [momentId, tenant.organizationId, tenant.productId, id, input.type, strength],
    );
    await appendProofEvent(em, {
      ...ledger, eventType: 'proof.moment.detected', properties: { momentId, valueEventId: id, type: input.type, strength },
    });
    const suppressed = await suppression(em, tenant.productId, personKey, settings.cooldownDays);
    let opportunityId: string | null = null;
    if (!suppressed) {
      opportunityId = newId('opp');
      await em.query(
        `INSERT INTO proof_opportunities (id, organization_id, product_id, trigger, person_ref, end_user_id, person_key, moment_id,
           value_event_id, strength, state, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'proposed', now() + make_interval(days => $11))`,
        [opportunityId, tenant.organizationId, tenant.productId, input.type, input.personRef ?? null, input.endUserId ?? null,
          personKey, momentId, id, strength, settings.opportunityTtlDays],
      );
      await appendProofEvent(em, { ...ledger, eventType: 'proof.opportunity.created', properties: { opportunityId, momentId, strength } });
    }
    await em.query(
      `UPDATE proof_value_events SET moment_id = $2, opportunity_id = $3, suppressed_reason = $4 WHERE id = $1`,
      [id, momentId, opportunityId, suppressed],
    );
  }
  return { event: viewValueEvent(await repo.findOneByOrFail({ id }), false), replayed: false };
}

export async function recordValueEvent(
  ds: DataSource, tenant: ProductTenant, input: ValueEventInput, origin: ValueEventOrigin, settings: ScoringSettings,
): Promise<{ event: ValueEventView; replayed: boolean }> {
  return ds.transaction((em) => recordValueEventIn(em, tenant, input, origin, settings));
}

export interface OpportunityFilter {
  state?: string;
  personRef?: string;
}

export async function listOpportunities(
  ds: DataSource, productId: string, filter: OpportunityFilter, page: PageRequest,
): Promise<Page<ReturnType<typeof viewOpportunity>>> {
  const qb = ds.getRepository(ProofOpportunity).createQueryBuilder('o').where('o.product_id = :productId', { productId });
  if (filter.state === 'expired') qb.andWhere(`o.state = 'proposed' AND o.expires_at <= now()`);
  else if (filter.state === 'proposed') qb.andWhere(`o.state = 'proposed' AND o.expires_at > now()`);
  else if (filter.state) qb.andWhere('o.state = :state', { state: filter.state });
  if (filter.personRef) qb.andWhere('o.person_ref = :personRef', { personRef: filter.personRef });
  return pageOf(qb, 'o', page, viewOpportunity);
}

export async function getOpportunity(ds: DataSource, productId: string, id: string) {
  const row = await ds.getRepository(ProofOpportunity).findOneBy({ id, productId });
  if (!row) throw notFound('opportunity');
  return viewOpportunity(row);
}

/**
 * A person's decision on a candidate. Accepting records the request made from it (the collection
 * setup's outcome route makes that draft request and passes its id); only a live proposal may change.
 */
export async function decideOpportunity(
  ds: DataSource, organizationId: string, id: string, decision: { action: 'accept' | 'dismiss'; teammateId: string; requestId?: string | null },
) {
  return ds.transaction(async (em) => {
    const repo = em.getRepository(ProofOpportunity);
    const row = await repo.createQueryBuilder('o').setLock('pessimistic_write')
      .where('o.id = :id AND o.organization_id = :organizationId', { id, organizationId }).getOne();
    if (!row) throw notFound('opportunity');
    if (opportunityState(row) !== 'proposed') throw conflict(`the candidate is ${opportunityState(row)}`);
    if (decision.requestId && !(await em.getRepository(ProofRequest).existsBy({ id: decision.requestId, organizationId }))) {
      throw notFound('request');
    }
    row.state = decision.action === 'accept' ? 'accepted' : 'dismissed';
    row.decidedBy = decision.teammateId;
    row.decidedAt = new Date();
    row.requestId = decision.requestId ?? null;
    return viewOpportunity(await repo.save(row));
  });
}
