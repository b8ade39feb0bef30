import { DataSource, EntityManager } from 'typeorm';
import { ProofOpportunity } from '../entities';
import { RequestChannel } from '../entities/proof-request';
import { Page, PageRequest, pageOf } from '../pagination';
import { newId } from '../rules/ids';
import { Creator, createRequestIn, recipientKeys } from '../collection/requests';
import { findFlow } from '../collection/flows';
import { conflict, notFound, validationFailed } from '../../runtime/service-error';
import { dbNow } from '../clock';

/**
 * Ask candidates (docs/integrations.md#rules-as-built): the one place that proposes, reads and decides them. The
 * key routes read them, and people decide at `/api/proof/collect/requests/outcome` (docs/collection.md).
 */

/** Proposed past its expiry reads as expired; nothing has to sweep it. */
export function opportunityState(row: ProofOpportunity, now = Date.now()): ProofOpportunity['state'] {
  return row.state === 'proposed' && row.expiresAt.getTime() <= now ? 'expired' : row.state;
}

export function viewOpportunity(row: ProofOpportunity) {
  return {
    id: row.id,
    productId: row.productId,
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
export type OpportunityView = ReturnType<typeof viewOpportunity>;

/**
 * Why a person must not get a new candidate, or null. Opt-outs are collection's suppressions (an
 * opt-out link or `never_ask`), the cooldown is a request sent to them: one record each, no copy.
 */
export async function askSuppression(
  em: EntityManager, productId: string, person: { personRef: string | null; endUserId: string | null; personKey: string }, cooldownDays: number,
): Promise<'opted_out' | 'open_opportunity' | 'cooldown' | null> {
  const [row] = await em.query(
    `SELECT
       EXISTS (SELECT 1 FROM collection_suppressions WHERE product_id = $1 AND recipient_key = ANY($2)) AS opted_out,
       EXISTS (SELECT 1 FROM proof_opportunities WHERE product_id = $1 AND person_key = $3 AND state = 'proposed' AND expires_at > now()) AS open,
       EXISTS (SELECT 1 FROM proof_requests WHERE product_id = $1 AND sent_at > now() - make_interval(days => $6)
                 AND (recipient->>'personRef' = $4 OR recipient->>'endUserId' = $5)) AS cooldown`,
    [productId, recipientKeys({ personRef: person.personRef ?? undefined, endUserId: person.endUserId ?? undefined }), person.personKey,
      person.personRef, person.endUserId, cooldownDays],
  );
  if (row.opted_out) return 'opted_out';
  if (row.open) return 'open_opportunity';
  if (row.cooldown) return 'cooldown';
  return null;
}

export interface NewOpportunity {
  organizationId: string;
  productId: string;
  trigger: string;
  personRef?: string | null;
  endUserId?: string | null;
  momentId?: string | null;
  valueEventId?: string | null;
  strength?: number | null;
  ttlDays: number;
}

/** Proposes a candidate; the value-event scoring calls this after its suppression check. */
export async function proposeOpportunity(em: EntityManager, o: NewOpportunity): Promise<ProofOpportunity> {
  const id = newId('opp');
  await em.query(
    `INSERT INTO proof_opportunities (id, organization_id, product_id, trigger, person_ref, end_user_id, person_key, moment_id,
       value_event_id, strength, state, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'proposed', now() + make_interval(days => $11))`,
    [id, o.organizationId, o.productId, o.trigger, o.personRef ?? null, o.endUserId ?? null, o.personRef ?? o.endUserId ?? null,
      o.momentId ?? null, o.valueEventId ?? null, o.strength ?? null, o.ttlDays],
  );
  return em.getRepository(ProofOpportunity).findOneByOrFail({ id });
}

export interface OpportunityFilter {
  state?: string;
  personRef?: string;
}

/** A workspace's candidates, or one product's when a key reads them; newest first. */
export async function listOpportunities(
  ds: DataSource, scope: { organizationId?: string; productId?: string }, filter: OpportunityFilter, page: PageRequest,
): Promise<Page<OpportunityView>> {
  const qb = ds.getRepository(ProofOpportunity).createQueryBuilder('o');
  if (scope.productId) qb.where('o.product_id = :productId', { productId: scope.productId });
  else qb.where('o.organization_id = :organizationId', { organizationId: scope.organizationId });
  if (filter.state === 'expired') qb.andWhere(`o.state = 'proposed' AND o.expires_at <= now()`);
  else if (filter.state === 'proposed') qb.andWhere(`o.state = 'proposed' AND o.expires_at > now()`);
  else if (filter.state) qb.andWhere('o.state = :state', { state: filter.state });
  if (filter.personRef) qb.andWhere('o.person_ref = :personRef', { personRef: filter.personRef });
  return pageOf(qb, 'o', page, viewOpportunity);
}

export async function getOpportunity(ds: DataSource, productId: string, id: string): Promise<OpportunityView> {
  const row = await ds.getRepository(ProofOpportunity).findOneBy({ id, productId });
  if (!row) throw notFound('opportunity');
  return viewOpportunity(row);
}

export type OpportunityDecision =
  | { candidateId: string; action: 'dismiss' }
  | { candidateId: string; action: 'accept'; flowId: string; channel: RequestChannel };

/**
 * The decision rules every path shares (the outcome route here, and a key's draft request naming the
 * candidate, docs/ai.md#requests-and-reply-capture): the candidate locked for the transaction, unknown → 404, anything but a live
 * proposal (decided, or expired on the clock) → 409.
 */
export async function lockProposedOpportunity(
  em: EntityManager, where: { id: string; organizationId: string; productId?: string },
): Promise<ProofOpportunity> {
  const row = await em.getRepository(ProofOpportunity).findOne({ where, lock: { mode: 'pessimistic_write' } });
  if (!row) throw notFound('candidate');
  if (opportunityState(row) !== 'proposed') throw conflict(`the candidate is ${opportunityState(row)}`);
  return row;
}

/** Records the decision on a candidate locked by lockProposedOpportunity, in the same transaction. */
export async function recordOpportunityDecision(
  em: EntityManager, id: string, decision: { state: 'accepted' | 'dismissed'; requestId: string | null; decidedBy: string },
): Promise<ProofOpportunity> {
  const repo = em.getRepository(ProofOpportunity);
  await repo.update({ id }, { state: decision.state, requestId: decision.requestId, decidedBy: decision.decidedBy, decidedAt: dbNow });
  return repo.findOneByOrFail({ id });
}

/**
 * A person's decision on a live proposal: accept makes the draft request (nothing is sent; a person
 * sends it) in the same transaction, dismiss closes the candidate.
 */
export async function decideOpportunity(ds: DataSource, who: Creator & { teammateId: string }, decision: OpportunityDecision) {
  return ds.transaction(async (em) => {
    const row = await lockProposedOpportunity(em, { id: decision.candidateId, organizationId: who.organizationId });
    let made: Awaited<ReturnType<typeof createRequestIn>> | null = null;
    if (decision.action === 'accept') {
      const flow = await findFlow(em, who.organizationId, decision.flowId);
      if (flow.productId !== row.productId) throw validationFailed([{ path: 'flowId', message: 'the flow must be of the candidate\'s product' }]);
      made = await createRequestIn(em, who, {
        flowId: flow.id, channel: decision.channel, recipient: { personRef: row.personRef ?? undefined, endUserId: row.endUserId ?? undefined },
      }, { opportunityId: row.id });
    }
    const decided = await recordOpportunityDecision(em, row.id, {
      state: decision.action === 'accept' ? 'accepted' : 'dismissed', requestId: made?.request.id ?? null, decidedBy: who.teammateId,
    });
    return { candidate: viewOpportunity(decided), made };
  });
}
