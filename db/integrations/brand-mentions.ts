import { DataSource, EntityManager } from 'typeorm';
import { ProofBrandMention, ProofItem, ProofVersion } from '../entities';
import { Page, PageRequest, pageOf } from '../pagination';
import { Actor, announceDirectly, appendProofEvent } from '../proof/proof-ledger';
import { contentHash } from '../proof/proof-items';
import { newId } from '../rules/ids';
import { ServiceError, conflict, notFound } from '../../runtime/service-error';
import { linkSourceToItem, recordSource } from './sources';
import { dbNow } from '../clock';

export const MENTION_PLATFORMS = ['g2', 'capterra', 'trustpilot', 'app_store', 'google_play', 'reddit', 'x', 'linkedin', 'web', 'other'] as const;

export function viewMention(row: ProofBrandMention) {
  return {
    id: row.id,
    productId: row.productId,
    platform: row.platform,
    url: row.url,
    author: row.author,
    text: row.text,
    rating: row.rating === null ? null : Number(row.rating),
    publishedAt: row.publishedAt ? row.publishedAt.toISOString() : null,
    reuse: row.reuse,
    importedItemId: row.importedItemId,
    createdAt: row.createdAt.toISOString(),
  };
}

export interface NewMention {
  productId: string;
  platform: string;
  url: string;
  author?: string;
  text: string;
  rating?: number;
  publishedAt?: string;
  reuse?: 'allowed_with_consent' | 'blocked';
}

/** Records a mention once per (product, url) with its source record and announcement; the same url answers the existing one. */
export async function createMention(ds: DataSource, organizationId: string, input: NewMention, actor: Actor) {
  const [product] = await ds.query(`SELECT 1 FROM products WHERE id = $1 AND organization_id = $2`, [input.productId, organizationId]);
  if (!product) throw notFound('product');
  return ds.transaction((em) => recordMentionIn(em, organizationId, input, actor));
}

/** The mention, its source and its `proof.brand_mention.created`, in the caller's transaction. */
export async function recordMentionIn(
  em: EntityManager, organizationId: string, input: NewMention & { signalId?: string }, actor: Actor,
) {
  const id = newId('bm');
  const inserted: unknown[] = await em.query(
    `INSERT INTO proof_brand_mentions (id, organization_id, product_id, platform, url, author, text, rating, published_at, reuse, signal_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) ON CONFLICT (product_id, url) DO NOTHING RETURNING id`,
    [id, organizationId, input.productId, input.platform, input.url, input.author ?? null, input.text, input.rating ?? null,
      input.publishedAt ? new Date(input.publishedAt) : null, input.reuse ?? 'allowed_with_consent', input.signalId ?? null],
  );
  const repo = em.getRepository(ProofBrandMention);
  if (inserted.length === 0) {
    return { mention: viewMention(await repo.findOneByOrFail({ productId: input.productId, url: input.url })), created: false };
  }
  const row = await repo.findOneByOrFail({ id });
  await recordSource(em, {
    organizationId, productId: input.productId, system: 'brand_mention', externalId: id, url: input.url, kind: 'mention',
    capturedAt: row.publishedAt ?? row.createdAt, capturedText: input.text, title: `${input.platform} mention`,
    attribution: input.author ? { name: input.author } : null, links: { brandMentionId: id, signalId: input.signalId ?? null },
    reuse: row.reuse === 'blocked' ? 'blocked' : 'allowed_with_consent', reasons: row.reuse === 'blocked' ? ['platform_terms'] : ['public_mention'],
    actor, ref: id,
  });
  await appendProofEvent(em, {
    organizationId, productId: input.productId, proofItemId: null, actor, eventType: 'proof.brand_mention.created',
    properties: { brandMentionId: id, platform: input.platform },
  });
  return { mention: viewMention(row), created: true };
}

export async function listMentions(ds: DataSource, organizationId: string, page: PageRequest): Promise<Page<ReturnType<typeof viewMention>>> {
  const qb = ds.getRepository(ProofBrandMention).createQueryBuilder('m').where('m.organization_id = :organizationId', { organizationId });
  return pageOf(qb, 'm', page, viewMention);
}

/**
 * Imports a mention as a review item: submitted, with no consent grant, so it renders nowhere until
 * the author consents. A blocked source is refused with SOURCE_POLICY_BLOCKED.
 */
export async function importMention(ds: DataSource, organizationId: string, id: string, teammateId: string) {
  return ds.transaction(async (em) => {
    const mention = await em.getRepository(ProofBrandMention).findOne({ where: { id, organizationId }, lock: { mode: 'pessimistic_write' } });
    if (!mention) throw notFound('brand mention');
    if (mention.reuse === 'blocked') throw new ServiceError('SOURCE_POLICY_BLOCKED', 'this source may not be reused', { reasons: ['platform_terms'] });
    if (mention.importedItemId) throw conflict('the mention was already imported');
    const itemId = newId('prf');
    const versionId = newId('pver');
    const content = {
      text: mention.text, ...(mention.rating === null ? {} : { rating: Number(mention.rating) }),
      ...(mention.author ? { attribution: { name: mention.author } } : {}),
    };
    await em.getRepository(ProofItem).insert({
      id: itemId, organizationId, productId: mention.productId, submissionId: newId('sub'), type: 'review', status: 'submitted',
      statusReason: null, statusBeforeDelete: null, customerPersonId: null, customerEmail: null, customerName: mention.author,
      originalVersionId: versionId, approvedPublicVersionId: null, overLimit: false, overLimitReasons: [], incentive: { offered: false },
      verificationState: 'unverified', renderHold: false, createdByKeyId: null, updatedAt: dbNow,
    });
    const versions = em.getRepository(ProofVersion);
    await versions.save(versions.create({
      id: versionId, proofItemId: itemId, versionNumber: 1, isOriginal: true, content, contentHash: contentHash(content),
      createdByType: 'import', createdById: mention.id, modelId: null, changeReason: null, parentVersionId: null, locale: null,
      semanticDiff: {}, approvalState: 'draft',
    }));
    mention.importedItemId = itemId;
    await em.getRepository(ProofBrandMention).save(mention);
    const [source] = await em.query(`SELECT id FROM proof_sources WHERE product_id = $1 AND system = 'brand_mention' AND external_id = $2`,
      [mention.productId, mention.id]);
    const actor: Actor = { type: 'teammate', id: teammateId };
    if (source) await linkSourceToItem(em, source.id, itemId, versionId, actor);
    const event = await appendProofEvent(em, {
      organizationId, productId: mention.productId, proofItemId: itemId, actor, eventType: 'proof.item.imported',
      properties: { brandMentionId: mention.id, sourceId: source?.id ?? null },
    });
    await announceDirectly(em, 'proof.item.imported', event);
    return { proofItemId: itemId, versionId, brandMentionId: mention.id, sourceId: source?.id ?? null };
  });
}
