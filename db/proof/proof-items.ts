import { DataSource, EntityManager } from 'typeorm';
import { AfterWrite, transactionWith } from '../platform/idempotency';
import { ServiceError, conflict, notFound, validationFailed } from '../../runtime/service-error';
import { sha256OfCanonical } from '../rules/canonical-json';
import { ConsentGrant, ProofItem, ProofVersion } from '../entities';
import { ProofItemStatus, ProofType } from '../entities/proof-item';
import { ProofContent } from '../entities/proof-version';
import { newId } from '../rules/ids';
import { secondsToNextUtcDay } from '../rules/date-time';
import { eligibleChannels, evaluateEligibility } from '../rules/proof-eligibility';
import { Actor, appendProofEvent } from './proof-ledger';
import { issueReceipt } from './proof-receipts';
import { semanticDiff } from '../rules/proof-semantic-diff';
import { consentStatus, recoveryClosed } from '../rules/proof-status';
import { Page, PageRequest, pageOf } from '../pagination';
import { consentedAttribution } from '../rules/source-attribution';
import { recordSource } from '../integrations/sources';

export const EXPANDABLE = ['versions', 'consent'] as const;
export type Expandable = (typeof EXPANDABLE)[number];
const VERSIONS_CAP = 10;
const CONSENT_CAP = 20;

export const revokedFinal = () =>
  new ServiceError('REVOKED_FINAL', 409, 'this item was revoked; revocation is final and wins over any approval');
export const recoveryWindowClosed = () =>
  new ServiceError('RECOVERY_WINDOW_CLOSED', 410, 'this item was deleted and its recovery window has closed');


/** Refuses any change to an item that is revoked (final), deleted (restore first) or purged (410). */
export function assertChangeable(item: ProofItem): void {
  if (recoveryClosed(item)) throw recoveryWindowClosed();
  if (item.status === 'revoked') throw revokedFinal();
  if (item.status === 'deleted') throw conflict('this item is deleted; a person may restore it inside the recovery window');
}

export function viewItem(item: ProofItem) {
  return {
    id: item.id,
    productId: item.productId,
    type: item.type,
    status: item.status,
    statusReason: item.statusReason,
    customerPersonId: item.customerPersonId,
    originalVersionId: item.originalVersionId,
    approvedPublicVersionId: item.approvedPublicVersionId,
    overLimit: item.overLimit,
    overLimitReasons: item.overLimitReasons,
    createdAt: item.createdAt.toISOString(),
    updatedAt: item.updatedAt.toISOString(),
  };
}

export function viewVersion(v: ProofVersion) {
  return {
    id: v.id,
    proofItemId: v.proofItemId,
    versionNumber: v.versionNumber,
    isOriginal: v.isOriginal,
    content: v.content,
    contentHash: v.contentHash,
    createdByType: v.createdByType,
    modelId: v.modelId,
    changeReason: v.changeReason,
    parentVersionId: v.parentVersionId,
    locale: v.locale,
    semanticDiff: v.semanticDiff,
    approvalState: v.approvalState,
    createdAt: v.createdAt.toISOString(),
  };
}

/** ConsentSummary: the terms, never the evidence (network address, key, capture channel). */
export function viewGrant(g: ConsentGrant) {
  return {
    id: g.id,
    approvedVersionId: g.approvedVersionId,
    state: g.state,
    displayMode: g.displayMode,
    identityFields: g.identityFields,
    channels: g.channels,
    products: g.products,
    media: g.media,
    paidUseAllowed: g.paidUseAllowed,
    translationAllowed: g.translationAllowed,
    geography: g.geography,
    validUntil: g.validUntil?.toISOString() ?? null,
    customerApprovedWording: g.customerApprovedWording,
    receiptHash: g.receiptHash,
    revokedAt: g.revokedAt?.toISOString() ?? null,
  };
}


export function contentHash(content: ProofContent): string {
  return `sha256:${sha256OfCanonical(content)}`;
}

/** An item of the key's product; another product's or tenant's id is indistinguishable from none. */
export async function findItem(
  em: EntityManager, scope: { productId?: string; organizationId: string }, id: string, lock = false,
): Promise<ProofItem> {
  const where = scope.productId ? { id, organizationId: scope.organizationId, productId: scope.productId } : { id, organizationId: scope.organizationId };
  const item = await em.getRepository(ProofItem).findOne({ where, ...(lock ? { lock: { mode: 'pessimistic_write' as const } } : {}) });
  if (!item) throw notFound('proof item');
  if (recoveryClosed(item)) throw recoveryWindowClosed();
  return item;
}

export interface SubmissionBody {
  type: ProofType;
  content: ProofContent;
  customer?: { personRef?: string; email?: string; name?: string };
  consent: {
    displayMode: string;
    identityFields: string[];
    channels: string[];
    products: { all?: boolean; ids?: string[] };
    media: string[];
    paidUseAllowed: boolean;
    translationAllowed: boolean;
    geography: string[];
    validUntil?: string | null;
    customerApprovedWording: boolean;
  };
  incentive?: { offered: boolean; description?: string };
  verification?: { state: string };
}

export type ConsentTerms = SubmissionBody['consent'];

/**
 * Records a consent grant for one exact version: the grant, its signed receipt and the ledger's
 * proof.consent.granted, in the caller's transaction. The receipt hash binds the terms to the wording.
 */
export async function recordGrant(
  ds: DataSource, em: EntityManager,
  g: {
    item: ProofItem; versionId: string; contentHash: string; terms: ConsentTerms; evidence: Record<string, string>; actor: Actor;
    /** The exact consent wording the customer saw (collection flows). */
    wording?: { consentTemplateVersionId: string; wordingHash: string };
  },
): Promise<string> {
  const grantId = newId('cns');
  const terms = { ...g.terms, validUntil: g.terms.validUntil ?? null };
  await em.getRepository(ConsentGrant).insert({
    id: grantId,
    proofItemId: g.item.id,
    approvedVersionId: g.versionId,
    state: 'active',
    displayMode: terms.displayMode,
    identityFields: terms.identityFields,
    channels: terms.channels,
    products: terms.products,
    media: terms.media,
    paidUseAllowed: terms.paidUseAllowed,
    translationAllowed: terms.translationAllowed,
    geography: terms.geography,
    validUntil: terms.validUntil ? new Date(terms.validUntil) : null,
    customerApprovedWording: terms.customerApprovedWording,
    receiptHash: `sha256:${sha256OfCanonical({ terms, proofItemId: g.item.id, versionId: g.versionId, contentHash: g.contentHash })}`,
    evidence: g.evidence,
    revokedAt: null,
    consentTemplateVersionId: g.wording?.consentTemplateVersionId ?? null,
    wordingHash: g.wording?.wordingHash ?? null,
  });
  await issueReceipt(ds, em, await em.getRepository(ConsentGrant).findOneByOrFail({ id: grantId }), g.item, g.contentHash);
  await appendProofEvent(em, {
    organizationId: g.item.organizationId, productId: g.item.productId, proofItemId: g.item.id, actor: g.actor,
    eventType: 'proof.consent.granted',
    properties: { consentGrantId: grantId, versionId: g.versionId, channels: terms.channels, byCustomer: g.actor.type === 'customer' },
  });
  return grantId;
}

/**
 * A person records the customer's consent for an exact version (granted, or changed: the new terms
 * supersede every active grant of the item at once). Never by a key; never for a revoked item.
 */
export async function grantConsent(
  ds: DataSource, organizationId: string, itemId: string, input: { versionId: string; consent: ConsentTerms }, teammateId: string,
) {
  return ds.transaction(async (em) => {
    const item = await findItem(em, { organizationId }, itemId, true);
    assertChangeable(item);
    const version = await em.getRepository(ProofVersion).findOneBy({ id: input.versionId, proofItemId: itemId });
    if (!version) throw notFound('version');
    await em.getRepository(ConsentGrant).update({ proofItemId: itemId, state: 'active' }, { state: 'superseded' });
    const grantId = await recordGrant(ds, em, {
      item, versionId: version.id, contentHash: version.contentHash, terms: input.consent,
      actor: { type: 'teammate', id: teammateId },
      evidence: { capturedVia: 'workspace', teammateId, at: new Date().toISOString() },
    });
    return viewGrant(await em.getRepository(ConsentGrant).findOneByOrFail({ id: grantId }));
  });
}

/**
 * The daily safety ceiling over every customer submission of the workspace (submit, nojs, v1): past
 * it, 429 with retry-after at the next UTC day. The only refusal of a submission (COLLECTION.md §8).
 */
export async function checkDailyCeiling(em: EntityManager, organizationId: string, ceiling: number, kept = 'your draft is kept'): Promise<void> {
  const [{ n }] = await em.query(
    `SELECT count(*)::int AS n FROM proof_items
      WHERE organization_id = $1 AND created_at >= date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'`, [organizationId]);
  if (n < ceiling) return;
  throw new ServiceError('INTAKE_SAFETY_CEILING', 429, `the workspace reached its daily safety ceiling of ${ceiling} submissions; ${kept}`,
    null, { 'retry-after': String(secondsToNextUtcDay()) });
}

export interface SubmissionContext {
  organizationId: string;
  productId: string;
  keyId: string;
  ip: string;
  monthlyAllowance: number;
  dailyCeiling: number;
}

/**
 * Stores a customer's submission: the item, its immutable original and the consent grant, always.
 * A used-up monthly allowance only flags the item (costly processing waits); it never refuses.
 */
export async function submitProof(
  ds: DataSource, ctx: SubmissionContext, body: SubmissionBody,
  /** Runs last inside the transaction: the idempotency record commits together with the item. */
  finish?: (em: EntityManager, result: SubmissionResult) => Promise<void>,
): Promise<SubmissionResult> {
  return ds.transaction(async (em) => {
    await checkDailyCeiling(em, ctx.organizationId, ctx.dailyCeiling, 'nothing was stored; retry with the same Idempotency-Key after the next UTC day');
    const [{ n }] = await em.query(
      `SELECT count(*)::int AS n FROM proof_items
        WHERE product_id = $1 AND created_at >= date_trunc('month', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'`,
      [ctx.productId],
    );
    const overLimitReasons = n >= ctx.monthlyAllowance ? ['monthly_submission_allowance_used_up'] : [];
    const itemId = newId('prf');
    const versionId = newId('pver');
    const now = new Date();
    const actor: Actor = { type: 'service_key', id: ctx.keyId };
    await em.getRepository(ProofItem).insert({
      id: itemId,
      organizationId: ctx.organizationId,
      productId: ctx.productId,
      submissionId: newId('sub'),
      type: body.type,
      status: 'submitted',
      statusReason: null,
      statusBeforeDelete: null,
      customerPersonId: body.customer?.personRef ?? null,
      customerEmail: body.customer?.email ?? null,
      customerName: body.customer?.name ?? null,
      originalVersionId: versionId,
      approvedPublicVersionId: null,
      overLimit: overLimitReasons.length > 0,
      overLimitReasons,
      incentive: body.incentive ?? { offered: false },
      verificationState: body.verification?.state ?? 'unverified',
      renderHold: false,
      createdByKeyId: ctx.keyId,
      updatedAt: now,
    });
    const hash = contentHash(body.content);
    const versions = em.getRepository(ProofVersion);
    await versions.save(versions.create({
      id: versionId,
      proofItemId: itemId,
      versionNumber: 1,
      isOriginal: true,
      content: body.content,
      contentHash: hash,
      createdByType: 'customer',
      createdById: body.customer?.personRef ?? null,
      modelId: null,
      changeReason: null,
      parentVersionId: null,
      locale: null,
      semanticDiff: {},
      approvalState: 'draft',
    }));
    const item = await em.getRepository(ProofItem).findOneByOrFail({ id: itemId });
    await appendProofEvent(em, {
      organizationId: ctx.organizationId, productId: ctx.productId, proofItemId: itemId, actor,
      eventType: 'proof.response.submitted', properties: { itemType: body.type, versionId, overLimit: item.overLimit },
    });
    await recordSource(em, {
      organizationId: ctx.organizationId, productId: ctx.productId, system: 'proof_submission', externalId: itemId,
      kind: body.type === 'review' ? 'review' : 'testimonial', capturedAt: now, capturedText: body.content.text ?? null,
      title: body.content.title ?? null, attribution: consentedAttribution(body.content.attribution, body.consent),
      links: { proofItemId: itemId, versionId }, reuse: 'allowed_with_consent', actor, ref: versionId,
    });
    const grantId = await recordGrant(ds, em, {
      item, versionId, contentHash: hash, terms: body.consent, actor,
      evidence: { capturedVia: 'api_submission', keyId: ctx.keyId, ip: ctx.ip, at: now.toISOString() },
    });
    const result: SubmissionResult = {
      submissionId: item.submissionId,
      proofItemId: itemId,
      originalVersionId: versionId,
      consentGrantId: grantId,
      overLimit: item.overLimit,
      overLimitReasons: item.overLimitReasons,
    };
    await finish?.(em, result);
    return result;
  });
}

export interface SubmissionResult {
  submissionId: string;
  proofItemId: string;
  originalVersionId: string;
  consentGrantId: string;
  overLimit: boolean;
  overLimitReasons: string[];
}

type VersionPage = { data: ReturnType<typeof viewVersion>[]; hasMore: boolean };
type ConsentPage = { data: { proofItemId: string; status: string; grants: ReturnType<typeof viewGrant>[] }; hasMore: boolean };
export interface Expanded { versions?: VersionPage; consent?: ConsentPage }

/** Latest `cap` versions per item for the whole page in one query; oldest first within each item. */
async function expandVersions(em: EntityManager, itemIds: string[], includePrivate: boolean): Promise<Map<string, VersionPage>> {
  const rows = await em.getRepository(ProofVersion).createQueryBuilder('v')
    .where(`v.id IN (SELECT id FROM (
        SELECT id, row_number() OVER (PARTITION BY proof_item_id ORDER BY version_number DESC) AS rn
          FROM proof_versions WHERE proof_item_id = ANY(:ids) ${includePrivate ? '' : `AND approval_state = 'approved'`}
      ) ranked WHERE rn <= :take)`, { ids: itemIds, take: VERSIONS_CAP + 1 })
    .orderBy('v.version_number', 'DESC')
    .getMany();
  const out = new Map<string, VersionPage>(itemIds.map((id) => [id, { data: [], hasMore: false }]));
  for (const v of rows) {
    const page = out.get(v.proofItemId)!;
    if (page.data.length === VERSIONS_CAP) page.hasMore = true;
    else page.data.unshift(viewVersion(v));
  }
  return out;
}

/** Latest `cap` grants per item for the whole page in one query. */
async function expandConsent(em: EntityManager, items: ProofItem[]): Promise<Map<string, ConsentPage>> {
  const rows = await em.getRepository(ConsentGrant).createQueryBuilder('g')
    .where(`g.id IN (SELECT id FROM (
        SELECT id, row_number() OVER (PARTITION BY proof_item_id ORDER BY created_at DESC, id DESC) AS rn
          FROM consent_grants WHERE proof_item_id = ANY(:ids)
      ) ranked WHERE rn <= :take)`, { ids: items.map((i) => i.id), take: CONSENT_CAP + 1 })
    .orderBy('g.created_at', 'DESC').addOrderBy('g.id', 'DESC')
    .getMany();
  const byItem = new Map<string, ConsentGrant[]>(items.map((i) => [i.id, []]));
  for (const g of rows) byItem.get(g.proofItemId)!.push(g);
  return new Map(items.map((item) => {
    const grants = byItem.get(item.id)!;
    const shown = grants.slice(0, CONSENT_CAP);
    return [item.id, {
      data: { proofItemId: item.id, status: consentStatus(item, grants), grants: shown.map(viewGrant) },
      hasMore: grants.length > CONSENT_CAP,
    }];
  }));
}

async function expandAll(em: EntityManager, items: ProofItem[], expand: Expandable[], includePrivate: boolean) {
  const ids = items.map((i) => i.id);
  const versions = expand.includes('versions') && ids.length > 0 ? await expandVersions(em, ids, includePrivate) : null;
  const consent = expand.includes('consent') && ids.length > 0 ? await expandConsent(em, items) : null;
  return (id: string): Expanded => ({
    ...(versions ? { versions: versions.get(id)! } : {}),
    ...(consent ? { consent: consent.get(id)! } : {}),
  });
}

export interface ItemFilter {
  statuses: Array<ProofItemStatus | 'published'>;
  type?: ProofType;
}

/** Newest first. Deleted items appear only when `deleted` is asked for, and never once purged. */
export async function listItems(
  ds: DataSource, productId: string, filter: ItemFilter, page: PageRequest, expand: Expandable[], includePrivate: boolean,
) {
  const qb = ds.getRepository(ProofItem).createQueryBuilder('i')
    .where('i.product_id = :productId', { productId })
    .andWhere(`NOT (i.status = 'deleted' AND (i.recovery_closed_at IS NOT NULL OR i.recovery_closes_at <= now()))`);
  const statuses = filter.statuses.filter((st) => st !== 'published');
  // `published`: placed on an active placement (whether it renders is decided per render).
  const published = `EXISTS (SELECT 1 FROM proof_placement_items pi JOIN proof_placements p ON p.id = pi.placement_id
    WHERE pi.proof_item_id = i.id AND pi.state = 'active' AND p.state = 'active')`;
  if (statuses.length > 0 && statuses.length < filter.statuses.length) {
    qb.andWhere(`(i.status IN (:...statuses) OR ${published})`, { statuses });
  } else if (statuses.length > 0) qb.andWhere('i.status IN (:...statuses)', { statuses });
  else if (filter.statuses.length > 0) qb.andWhere(`i.status <> 'deleted' AND ${published}`);
  else qb.andWhere(`i.status <> 'deleted'`);
  if (filter.type) qb.andWhere('i.type = :type', { type: filter.type });
  const result: Page<ProofItem> = await pageOf(qb, 'i', page, (row) => row);
  if (expand.length === 0) return { data: result.data.map(viewItem), nextCursor: result.nextCursor };
  const expandedOf = await expandAll(ds.manager, result.data, expand, includePrivate);
  return {
    data: result.data.map((item) => ({ ...viewItem(item), expanded: expandedOf(item.id) })),
    nextCursor: result.nextCursor,
  };
}

export async function grantsOf(em: EntityManager, itemId: string): Promise<ConsentGrant[]> {
  return em.getRepository(ConsentGrant).find({ where: { proofItemId: itemId }, order: { createdAt: 'DESC', id: 'DESC' } });
}

export async function readItem(
  ds: DataSource, scope: { organizationId: string; productId: string }, id: string, expand: Expandable[], includePrivate: boolean,
) {
  const item = await findItem(ds.manager, scope, id);
  const grants = await grantsOf(ds.manager, id);
  const publicVersion = item.approvedPublicVersionId && item.status !== 'revoked'
    ? await ds.getRepository(ProofVersion).findOneBy({ id: item.approvedPublicVersionId })
    : null;
  const eligibility = evaluateEligibility(item, grants);
  const data: Record<string, unknown> = {
    item: viewItem(item),
    publicVersion: publicVersion ? viewVersion(publicVersion) : null,
    eligibleChannels: eligibleChannels(eligibility),
    eligibility,
  };
  if (expand.length > 0) data.expanded = (await expandAll(ds.manager, [item], expand, includePrivate))(item.id);
  return data;
}

/** Oldest first; without proof:read_private only approved versions are listed (unapproved are omitted). */
export async function listVersions(
  ds: DataSource, scope: { organizationId: string; productId: string }, id: string, includePrivate: boolean,
) {
  await findItem(ds.manager, scope, id);
  const qb = ds.getRepository(ProofVersion).createQueryBuilder('v').where('v.proof_item_id = :id', { id });
  if (!includePrivate) qb.andWhere(`v.approval_state = 'approved'`);
  const rows = await qb.orderBy('v.version_number', 'ASC').getMany();
  return { data: rows.map(viewVersion), nextCursor: null };
}

export interface NewVersion {
  content: ProofContent;
  changeReason: string;
  parentVersionId?: string;
  modelId?: string;
  locale?: string;
}

/** A draft derivative; the parent (by default the latest version) is never touched. */
export async function createVersion(
  ds: DataSource, scope: { organizationId: string; productId: string }, id: string, input: NewVersion, actor: Actor, after?: AfterWrite,
) {
  return transactionWith(ds, async (em) => {
    const item = await findItem(em, scope, id, true);
    assertChangeable(item);
    const versions = em.getRepository(ProofVersion);
    const latest = await versions.findOneOrFail({ where: { proofItemId: id }, order: { versionNumber: 'DESC' } });
    let parent = latest;
    if (input.parentVersionId) {
      const found = await versions.findOneBy({ id: input.parentVersionId, proofItemId: id });
      if (!found) throw validationFailed([{ path: 'parentVersionId', message: 'is not a version of this item' }]);
      parent = found;
    }
    const version = versions.create({
      id: newId('pver'),
      proofItemId: id,
      versionNumber: latest.versionNumber + 1,
      isOriginal: false,
      content: input.content,
      contentHash: contentHash(input.content),
      createdByType: actor.type,
      createdById: actor.id,
      modelId: input.modelId ?? null,
      changeReason: input.changeReason,
      parentVersionId: parent.id,
      locale: input.locale ?? null,
      semanticDiff: { parentVersionId: parent.id, ...semanticDiff(parent.content, input.content) },
      approvalState: 'draft',
    });
    await versions.save(version);
    await em.getRepository(ProofItem).update(id, { updatedAt: new Date() });
    await appendProofEvent(em, {
      organizationId: item.organizationId, productId: item.productId, proofItemId: id, actor,
      eventType: 'proof.version.created', properties: { versionId: version.id, versionNumber: version.versionNumber },
    });
    return viewVersion(await versions.findOneByOrFail({ id: version.id }));
  }, after);
}

export async function readConsent(ds: DataSource, scope: { organizationId: string; productId: string }, id: string) {
  const item = await findItem(ds.manager, scope, id);
  const grants = await grantsOf(ds.manager, id);
  return { proofItemId: item.id, status: consentStatus(item, grants), grants: grants.map(viewGrant) };
}
