import { createHash } from 'node:crypto';
import { AfterWrite, transactionWith } from '../platform/idempotency';
import { DataSource } from 'typeorm';
import { ServiceError, conflict, notFound, validationFailed } from '../../runtime/service-error';
import { ProofAsset, ProofRevocation, ProofVersion } from '../entities';
import { ASSET_APPROVAL_STATES } from '../entities/proof-asset';
import { PageRequest, pageOf } from '../pagination';
import { newId } from '../rules/ids';
import { EligibilityContext, EligibilityInput, PROOF_CHANNELS, decideEligibility } from '../rules/proof-eligibility';
import { Actor, appendProofEvent } from './proof-ledger';
import { assertChangeable, findItem, grantsOf } from './proof-items';
import { QuoteCardFormat, QuoteCardTheme, DEFAULT_THEME, quoteCardSvg } from '../rules/proof-quote-card';
import { consentedAttribution } from './proof-render';

export const QUOTE_CARD_TEMPLATE = 'quote-card-v1';

export interface QuoteCardRequest {
  proofItemId: string;
  versionId?: string;
  format?: QuoteCardFormat;
  channel?: string;
  excerpt?: string;
  theme?: Partial<QuoteCardTheme>;
}

export function viewAsset(a: ProofAsset) {
  return {
    id: a.id,
    assetType: a.assetType,
    sourceProofIds: a.sourceProofIds,
    sourceVersionIds: a.sourceVersionIds,
    templateId: a.templateId,
    brandKitVersion: a.brandKitVersion,
    approvalState: a.approvalState,
    channelEligibility: a.channelEligibility,
    files: a.files,
    content: a.mediaType === 'image/svg+xml' ? { ...a.content, mediaType: a.mediaType, svg: a.body.toString('utf8') }
    : { ...a.content, mediaType: a.mediaType },
    createdAt: a.createdAt.toISOString(),
  };
}

const notEligible = (channel: string, reasons: string[]) =>
  new ServiceError('NOT_ELIGIBLE', `this proof may not be used for a quote card on ${channel}`, { channel, reasons });

/**
 * A quote card of the item's approved wording (or a verbatim excerpt of it), only where the evaluator
 * says the use is eligible; saved as a draft asset with its lineage and announced as proof.asset.ready.
 */
export async function generateQuoteCard(
  ds: DataSource, scope: { organizationId: string; productId: string }, body: QuoteCardRequest, actor: Actor, after?: AfterWrite,
) {
  return transactionWith(ds, async (em) => {
    const item = await findItem(em, scope, body.proofItemId);
    const versionId = body.versionId ?? item.approvedPublicVersionId;
    const version = versionId ? await em.getRepository(ProofVersion).findOneBy({ id: versionId, proofItemId: item.id }) : null;
    if (body.versionId && !version) throw validationFailed([{ path: 'versionId', message: 'is not a version of this item' }]);
    const original = await em.getRepository(ProofVersion).findOneBy({ id: item.originalVersionId ?? '' });
    const input: EligibilityInput = {
      item,
      version: version && {
        id: version.id, approvalState: version.approvalState, locale: version.locale,
        originalLocale: original?.locale ?? null, rating: version.content.rating ?? null,
      },
      grants: await grantsOf(em, item.id),
      revocations: await em.getRepository(ProofRevocation).findBy({ proofItemId: item.id }),
    };
    const now = new Date();
    const context = (channel: string): EligibilityContext => ({ channel, productId: scope.productId, media: 'text', now });
    const channel = body.channel ?? 'social_organic';
    const decision = decideEligibility(input, context(channel));
    const words = version?.content.text ?? version?.content.title ?? '';
    const quote = body.excerpt?.trim() ?? words;
    // The customer approved exact words: an excerpt may shorten them, never change them.
    const reasons = [...decision.reasons, ...(body.excerpt !== undefined && !words.includes(quote) ? ['excerpt_not_verbatim'] : [])];
    if (reasons.length > 0 || !version || !quote) throw notEligible(channel, reasons.length ? reasons : ['no_text']);
    const grant = input.grants.find((g) => g.id === decision.grantId)!;
    const attribution = consentedAttribution(version.content.attribution, decision.identityFields, grant.displayMode);
    const format = body.format ?? 'square';
    const theme = { ...DEFAULT_THEME, ...body.theme };
    const svg = quoteCardSvg({
      format, quote, theme, disclosure: decision.disclosure,
      attribution: ['name', 'title', 'company'].map((f) => attribution[f]).filter(Boolean).join(', '),
    });
    const id = newId('ast');
    const repo = em.getRepository(ProofAsset);
    await repo.insert({
      id,
      organizationId: scope.organizationId,
      productId: scope.productId,
      assetType: 'quote_card',
      sourceProofIds: [item.id],
      sourceVersionIds: [version.id],
      templateId: QUOTE_CARD_TEMPLATE,
      brandKitVersion: null,
      approvalState: 'draft',
      channelEligibility: PROOF_CHANNELS.filter((c) => decideEligibility(input, context(c)).eligible),
      files: [`quote-card-${format}.svg`],
      content: { format, channel, quote, attribution, disclosure: decision.disclosure, theme, sha256: createHash('sha256').update(svg).digest('hex') },
      mediaType: 'image/svg+xml',
      body: Buffer.from(svg, 'utf8'),
    });
    await appendProofEvent(em, {
      organizationId: scope.organizationId, productId: scope.productId, proofItemId: item.id, assetId: id, actor,
      eventType: 'proof.asset.ready', properties: { assetType: 'quote_card', format, sourceVersionIds: [version.id] },
    });
    return viewAsset(await repo.findOneByOrFail({ id }));
  }, after);
}

/** An asset quotes its source items, so it answers as they do: revoked, deleted or purged items refuse. */
export async function getAsset(ds: DataSource, scope: { organizationId: string; productId: string }, id: string) {
  const asset = await ds.getRepository(ProofAsset).findOneBy({ id, organizationId: scope.organizationId, productId: scope.productId });
  if (!asset) throw notFound('asset');
  for (const itemId of asset.sourceProofIds) assertChangeable(await findItem(ds.manager, scope, itemId));
  return viewAsset(asset);
}

/**
 * The workspace's generated assets for the console, newest first, by approval state and product. An asset quotes
 * its source items, so one whose source is revoked, deleted or purged is not listed (getAsset refuses it too).
 */
export async function listWorkspaceAssets(
  ds: DataSource, organizationId: string, filter: { state?: (typeof ASSET_APPROVAL_STATES)[number]; productId?: string }, page: PageRequest,
) {
  const qb = ds.getRepository(ProofAsset).createQueryBuilder('a')
    .where('a.organization_id = :organizationId', { organizationId })
    .andWhere(`NOT EXISTS (SELECT 1 FROM proof_items src WHERE src.id = ANY(a.source_proof_ids) AND src.status IN ('revoked', 'deleted'))`);
  if (filter.state) qb.andWhere('a.approval_state = :state', { state: filter.state });
  if (filter.productId) qb.andWhere('a.product_id = :productId', { productId: filter.productId });
  return pageOf(qb, 'a', page, (a) => ({ ...viewAsset(a), productId: a.productId }));
}

/**
 * A person approves a generated asset; only approved assets are ever served publicly (as media of an
 * eligible item). Approving again changes nothing.
 */
export async function approveAsset(ds: DataSource, organizationId: string, id: string, actor: Actor) {
  return ds.transaction(async (em) => {
    const repo = em.getRepository(ProofAsset);
    const asset = await repo.findOne({ where: { id, organizationId }, lock: { mode: 'pessimistic_write' } });
    if (!asset) throw notFound('asset');
    // A case study quotes its customers: each must approve their words first (docs/collection.md#setup-teammates).
    const approvals = (asset.content as { customerApprovals?: Array<{ state: string }> }).customerApprovals ?? [];
    if (approvals.some((a) => a.state === 'pending' || a.state === 'declined')) {
      throw conflict('every quoted customer must approve this asset first');
    }
    const gone: unknown[] = await em.query(
      `SELECT 1 FROM proof_items WHERE id = ANY($1) AND status IN ('revoked', 'deleted')`, [asset.sourceProofIds]);
    if (gone.length > 0) throw conflict('the asset quotes a story that is revoked or deleted; it can no longer be approved');
    if (asset.approvalState !== 'approved') {
      await repo.update(id, { approvalState: 'approved' });
      await appendProofEvent(em, {
        organizationId, productId: asset.productId, proofItemId: asset.sourceProofIds[0] ?? null, assetId: id, actor,
        eventType: 'proof.asset.approved', properties: { assetType: asset.assetType },
      });
    }
    return viewAsset(await repo.findOneByOrFail({ id }));
  });
}
