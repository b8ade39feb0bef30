import { DataSource, EntityManager } from 'typeorm';
import { ProofValueEvent } from '../entities';
import { Actor, appendProofEvent } from '../proof/proof-ledger';
import { newId } from '../rules/ids';
import { ValueEventInput, valueEventIssues, valueEventStrength } from '../rules/value-events';
import type { ProductTenant } from '../platform/product-tenant';
import { askSuppression, proposeOpportunity } from './opportunities';
import { recordSource } from './sources';
import { validationFailed } from '../../runtime/service-error';

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

function sourceKindOf(type: string, origin: ValueEventOrigin['type']) {
  if (origin === 'payment') return 'payment' as const;
  if (type === 'resolved_ticket') return 'ticket' as const;
  if (type === 'score') return 'survey_answer' as const;
  return 'signal' as const;
}

function actorOf(origin: ValueEventOrigin): Actor {
  return origin.type === 'api' ? { type: 'service_key', id: origin.id } : { type: 'system', id: origin.id };
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
    const suppressed = await askSuppression(
      em, tenant.productId, { personRef: input.personRef ?? null, endUserId: input.endUserId ?? null, personKey }, settings.cooldownDays);
    let opportunityId: string | null = null;
    if (!suppressed) {
      opportunityId = (await proposeOpportunity(em, {
        organizationId: tenant.organizationId, productId: tenant.productId, trigger: input.type, personRef: input.personRef,
        endUserId: input.endUserId, momentId, valueEventId: id, strength, ttlDays: settings.opportunityTtlDays,
      })).id;
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
