import { DataSource } from 'typeorm';
import { ProofReward } from '../entities';
import { Page, PageRequest, pageOf } from '../pagination';
import { Actor, appendProofEvent } from '../proof/proof-ledger';
import { newId } from '../rules/ids';
import type { ProductTenant } from '../platform/product-tenant';
import { conflict, notFound, validationFailed } from '../../runtime/service-error';
import { databaseNow } from '../clock';

export const REWARD_KINDS = ['gift_card', 'account_credit', 'donation', 'feature_unlock'] as const;
export const REWARD_STATES = ['pending', 'issued', 'unlock_pending', 'fulfilled', 'cancelled'] as const;
export const UNLOCK_KEY_PATTERN = /^[A-Za-z0-9._:-]{1,100}$/;

export function viewReward(row: ProofReward) {
  return {
    id: row.id,
    productId: row.productId,
    proofItemId: row.proofItemId,
    personRef: row.personRef,
    endUserId: row.endUserId,
    kind: row.kind,
    description: row.description,
    unlockKey: row.unlockKey,
    state: row.state,
    createdAt: row.createdAt.toISOString(),
    approvedAt: row.approvedAt ? row.approvedAt.toISOString() : null,
    approvedBy: row.approvedBy,
    fulfilledAt: row.fulfilledAt ? row.fulfilledAt.toISOString() : null,
  };
}
export type RewardView = ReturnType<typeof viewReward>;

export interface NewReward {
  productId: string;
  kind: (typeof REWARD_KINDS)[number];
  description: string;
  unlockKey?: string;
  proofItemId?: string;
  personRef?: string;
  endUserId?: string;
}

/**
 * A pending reward for taking part. It has no input about a rating, sentiment or wording: a reward
 * can never depend on what the customer said. Collection's incentive submissions call this too.
 */
export async function createReward(ds: DataSource, organizationId: string, input: NewReward): Promise<RewardView> {
  const [product] = await ds.query(`SELECT 1 FROM products WHERE id = $1 AND organization_id = $2`, [input.productId, organizationId]);
  if (!product) throw notFound('product');
  if ((input.kind === 'feature_unlock') !== (input.unlockKey !== undefined)) {
    throw validationFailed([{ path: 'unlockKey', message: 'is required for feature_unlock and only for it' }]);
  }
  let personRef = input.personRef ?? null;
  if (input.proofItemId !== undefined) {
    const [item] = await ds.query(`SELECT customer_person_id FROM proof_items WHERE id = $1 AND product_id = $2`, [input.proofItemId, input.productId]);
    if (!item) throw notFound('proof item');
    personRef ??= item.customer_person_id;
  }
  if (!personRef && !input.endUserId) throw validationFailed([{ path: 'personRef',
    message: 'personRef, endUserId or a proofItemId with a customer is required' }]);
  const repo = ds.getRepository(ProofReward);
  return viewReward(await repo.save(repo.create({
    id: newId('rwd'), organizationId, productId: input.productId, proofItemId: input.proofItemId ?? null, personRef,
    endUserId: input.endUserId ?? null, kind: input.kind, description: input.description, unlockKey: input.unlockKey ?? null,
    state: 'pending', approvedAt: null, approvedBy: null, fulfilledAt: null, cancelledAt: null,
  })));
}

export interface RewardFilter {
  state?: string;
  kind?: string;
}

export async function listRewards(ds: DataSource, organizationId: string, filter: RewardFilter, page: PageRequest): Promise<Page<RewardView>> {
  const qb = ds.getRepository(ProofReward).createQueryBuilder('r').where('r.organization_id = :organizationId', { organizationId });
  if (filter.state) qb.andWhere('r.state = :state', { state: filter.state });
  if (filter.kind) qb.andWhere('r.kind = :kind', { kind: filter.kind });
  return pageOf(qb, 'r', page, viewReward);
}

type Where = { id: string; organizationId: string } | { id: string; productId: string };

async function transition(
  ds: DataSource, where: Where, change: (row: ProofReward, now: Date) => { event?: 'issued' | 'feature_unlock' } | 'unchanged', actor: Actor,
): Promise<RewardView> {
  return ds.transaction(async (em) => {
    const row = await em.getRepository(ProofReward).findOne({ where, lock: { mode: 'pessimistic_write' } });
    if (!row) throw notFound('reward');
    const outcome = change(row, await databaseNow(em));
    if (outcome === 'unchanged') return viewReward(row);
    const saved = await em.getRepository(ProofReward).save(row);
    const ledger = { organizationId: row.organizationId, productId: row.productId, proofItemId: row.proofItemId, actor };
    if (outcome.event === 'issued') {
      await appendProofEvent(em, { ...ledger, eventType: 'proof.reward.issued', properties: { rewardId: row.id, kind: row.kind } });
    } else if (outcome.event === 'feature_unlock') {
      await appendProofEvent(em, {
        ...ledger, eventType: 'proof.reward.feature_unlock',
        properties: { rewardId: row.id, unlockKey: row.unlockKey, personRef: row.personRef, endUserId: row.endUserId },
      });
    }
    return viewReward(saved);
  });
}

/** A person approves the participation: issued, or for a feature unlock, waiting for the product's confirm. */
export async function approveReward(ds: DataSource, organizationId: string, id: string, teammateId: string): Promise<RewardView> {
  return transition(ds, { id, organizationId }, (row, now) => {
    if (row.state !== 'pending') throw conflict(`the reward is ${row.state}`);
    row.approvedAt = now;
    row.approvedBy = teammateId;
    row.state = row.kind === 'feature_unlock' ? 'unlock_pending' : 'issued';
    return { event: row.kind === 'feature_unlock' ? 'feature_unlock' : 'issued' };
  }, { type: 'teammate', id: teammateId });
}

export async function cancelReward(ds: DataSource, organizationId: string, id: string, teammateId: string): Promise<RewardView> {
  return transition(ds, { id, organizationId }, (row, now) => {
    if (row.state !== 'pending' && row.state !== 'unlock_pending') throw conflict(`the reward is ${row.state}`);
    row.state = 'cancelled';
    row.cancelledAt = now;
    return {};
  }, { type: 'teammate', id: teammateId });
}

/** The product switched the unlock on. A repeat answers the same fulfilled reward and announces nothing. */
export async function confirmReward(ds: DataSource, tenant: ProductTenant, id: string, keyId: string): Promise<RewardView> {
  return transition(ds, { id, productId: tenant.productId }, (row, now) => {
    if (row.state === 'fulfilled' && row.kind === 'feature_unlock') return 'unchanged';
    if (row.kind !== 'feature_unlock' || row.state !== 'unlock_pending') throw conflict(`a ${row.kind} reward in state ${row.state} cannot be confirmed`);
    row.state = 'fulfilled';
    row.fulfilledAt = now;
    return { event: 'issued' };
  }, { type: 'service_key', id: keyId });
}
