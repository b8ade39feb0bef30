import { DataSource, EntityManager } from 'typeorm';
import { ProofEvent } from '../entities';
import { newId } from '../rules/ids';
import { enqueueEvent } from '../outbox';
import { Page, PageRequest, pageOf } from '../pagination';

export interface Actor {
  type: 'service_key' | 'teammate' | 'system' | 'customer';
  id: string | null;
}

export const SYSTEM_ACTOR: Actor = { type: 'system', id: null };

/** Ledger types that go out as webhooks with envelope id `evt_<ledger id>`: the spec's proof event types. */
const PUBLISHED = new Set([
  'proof.response.submitted', 'proof.consent.granted', 'proof.consent.revoked', 'proof.item.approved',
  'proof.health.warning', 'proof.placement.published', 'proof.asset.ready', 'proof.response.routed',
  'proof.moment.detected', 'proof.opportunity.created', 'proof.reward.issued', 'proof.reward.feature_unlock',
  'proof.brand_mention.created', 'proof.request.sent', 'proof.reply.captured',
]);

/**
 * The only properties a webhook may carry, per type: ids, enums, counts and flags. Customer text,
 * reasons, evidence and personal data never appear here; receivers fetch them with a key.
 */
const ALLOWED_PROPERTIES: Record<string, string[]> = {
  'proof.response.submitted': ['itemType', 'versionId', 'overLimit', 'flowId', 'flowVersionId', 'source'],
  'proof.response.routed': ['routingId', 'scale', 'band', 'followUp'],
  'proof.consent.granted': ['consentGrantId', 'versionId', 'channels', 'byCustomer'],
  'proof.consent.revoked': ['consentGrantId', 'revocationId', 'consentGrantIds', 'byCustomer'],
  'proof.item.approved': ['versionId', 'versionNumber'],
  'proof.item.rejected': ['versionId'],
  'proof.revocation.completed': ['revocationId', 'byCustomer'],
  'proof.health.warning': ['check', 'revocationId', 'consentGrantId', 'dueAt', 'placementId', 'count', 'mediaAssetId'],
  'proof.placement.published': ['renderCacheVersion', 'eligibleCount', 'excludedCount'],
  'proof.asset.ready': ['assetType', 'format', 'sourceVersionIds'],
  'proof.moment.detected': ['momentId', 'valueEventId', 'type', 'strength'],
  'proof.opportunity.created': ['opportunityId', 'momentId', 'strength'],
  'proof.reward.issued': ['rewardId', 'kind'],
  // The product needs the person to switch the unlock on; the reward's subject is the only personal field sent.
  'proof.reward.feature_unlock': ['rewardId', 'unlockKey', 'personRef', 'endUserId'],
  'proof.brand_mention.created': ['brandMentionId', 'platform'],
  'proof.request.sent': ['requestId', 'channel', 'reminder'],
  'proof.reply.captured': ['requestId'],
  'proof.item.imported': ['brandMentionId', 'sourceId'],
};

/** Ledger types that add a provenance step to the source records of their item. */
const SOURCE_STEPS: Record<string, string> = {
  'proof.version.created': 'versioned',
  'proof.item.approved': 'approved',
  'proof.consent.revoked': 'revoked',
  'proof.item.purged': 'erased',
};

export function allowListed(type: string, properties: Record<string, unknown>): Record<string, unknown> {
  const allowed = ALLOWED_PROPERTIES[type] ?? [];
  return Object.fromEntries(Object.entries(properties).filter(([k]) => allowed.includes(k)));
}

export interface LedgerEntry {
  organizationId: string;
  productId: string | null;
  eventType: string;
  proofItemId: string | null;
  placementId?: string;
  assetId?: string;
  actor: Actor;
  /** Ids and enums only; the ledger is readable with proof:read and feeds webhooks. */
  properties?: Record<string, unknown>;
}

function fetchUrlOf(event: ProofEvent): string {
  if (event.placementId) return `/api/v1/proof/placements/${event.placementId}`;
  if (event.assetId) return `/api/v1/proof/assets/${event.assetId}`;
  if (event.proofItemId) return `/api/v1/proof/items/${event.proofItemId}`;
  return `/api/v1/proof/events?eventId=${event.id}`;
}

export function webhookData(event: ProofEvent): Record<string, unknown> {
  return {
    eventVersion: 1,
    proofEventId: event.id,
    ledgerEventType: event.eventType,
    occurredAt: event.createdAt.toISOString(),
    emittedAt: new Date().toISOString(),
    actor: { type: event.actorType, id: event.actorId },
    productId: event.productId,
    proofItemId: event.proofItemId,
    placementId: event.placementId,
    assetId: event.assetId,
    fetchUrl: fetchUrlOf(event),
    properties: allowListed(event.eventType, event.properties),
  };
}

/**
 * Appends a ledger row inside the caller's transaction and, for published types, queues its webhook
 * in the same transaction, so a change, its ledger row and its announcement commit or vanish together.
 */
export async function appendProofEvent(em: EntityManager, entry: LedgerEntry): Promise<ProofEvent> {
  const repo = em.getRepository(ProofEvent);
  const event = await repo.save(repo.create({
    id: newId('pev'),
    organizationId: entry.organizationId,
    productId: entry.productId,
    eventType: entry.eventType,
    proofItemId: entry.proofItemId,
    placementId: entry.placementId ?? null,
    assetId: entry.assetId ?? null,
    actorType: entry.actor.type,
    actorId: entry.actor.id,
    properties: entry.properties ?? {},
  }));
  const step = SOURCE_STEPS[event.eventType];
  if (step && event.proofItemId) {
    await em.query(
      `UPDATE proof_sources SET provenance = provenance || $2::jsonb WHERE proof_item_id = $1`,
      [event.proofItemId, JSON.stringify([{
        step, at: event.createdAt.toISOString(), actor: { type: event.actorType, id: event.actorId }, ref: event.id, contentHash: null,
      }])],
    );
  }
  if (PUBLISHED.has(event.eventType)) {
    await enqueueEvent(em, {
      id: `evt_${event.id}`, organizationId: event.organizationId, productId: event.productId,
      type: event.eventType, data: webhookData(event),
    });
  }
  return event;
}

/** A change also announced directly by the action (spec: a different envelope id, same data shape). */
export async function announceDirectly(em: EntityManager, type: string, event: ProofEvent): Promise<void> {
  await enqueueEvent(em, {
    organizationId: event.organizationId, productId: event.productId, type,
    data: { ...webhookData(event), ledgerEventType: type, properties: allowListed(type, event.properties) },
  });
}

export function viewProofEvent(event: ProofEvent) {
  return {
    id: event.id,
    eventType: event.eventType,
    productId: event.productId,
    placementId: event.placementId,
    proofItemId: event.proofItemId,
    assetId: event.assetId,
    actor: { type: event.actorType, id: event.actorId },
    timestamp: event.createdAt.toISOString(),
    properties: event.properties,
  };
}

export interface LedgerFilter {
  proofItemId?: string;
  eventType?: string;
  eventId?: string;
}

/** The product's ledger, oldest first. `eventId` takes a ledger id, its webhook envelope id or a value event's eventId. */
export async function listProofEvents(
  ds: DataSource, productId: string, filter: LedgerFilter, page: PageRequest,
): Promise<Page<ReturnType<typeof viewProofEvent>>> {
  const qb = ds.getRepository(ProofEvent).createQueryBuilder('e').where('e.product_id = :productId', { productId });
  if (filter.proofItemId) qb.andWhere('e.proof_item_id = :itemId', { itemId: filter.proofItemId });
  if (filter.eventType) qb.andWhere('e.event_type = :type', { type: filter.eventType });
  if (filter.eventId) {
    qb.andWhere(`(e.id = :ledgerId OR (e.event_type = 'proof.value_event.recorded' AND e.properties->>'eventId' = :eventId))`, {
      ledgerId: filter.eventId.replace(/^evt_/, ''), eventId: filter.eventId,
    });
  }
  return pageOf(qb, 'e', page, viewProofEvent, 'ASC');
}
