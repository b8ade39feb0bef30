import { DataSource, EntityManager, In } from 'typeorm';
import { ServiceError, conflict, notFound } from '../../runtime/service-error';
import { sha256OfCanonical } from '../rules/canonical-json';
import { ConsentGrant, ProofItem, ProofVersion } from '../entities';
import { ProofItemStatus, ProofType } from '../entities/proof-item';
import { ProofContent } from '../entities/proof-version';
import { eligibleChannels, evaluateEligibility } from '../rules/proof-eligibility';
import { consentStatus, recoveryClosed } from '../rules/proof-status';
import { Page, PageRequest, pageOf } from '../pagination';

export const EXPANDABLE = ['versions', 'consent'] as const;
export type Expandable = (typeof EXPANDABLE)[number];
const VERSIONS_CAP = 10;
const CONSENT_CAP = 20;

export const revokedFinal = () =>
  new ServiceError('REVOKED_FINAL', 'this item was revoked; revocation is final and wins over any approval');
export const recoveryWindowClosed = () =>
  new ServiceError('RECOVERY_WINDOW_CLOSED', 'this item was deleted and its recovery window has closed');

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

const NOT_PURGED = `NOT (i.status = 'deleted' AND (i.recovery_closed_at IS NOT NULL OR i.recovery_closes_at <= now()))`;
const EXCERPT_LENGTH = 140;

/** How a teammate recognizes a story in a list: its original's title, else the start of its words. */
function excerptOf(content: ProofContent | undefined): string | null {
  const words = content?.title ?? content?.text;
  if (!words) return null;
  return words.length > EXCERPT_LENGTH ? `${words.slice(0, EXCERPT_LENGTH - 1)}…` : words;
}

/**
 * The workspace's items of every product for the console, newest first, each with its original's excerpt.
 * Deleted items appear only when `deleted` is asked for, and never once purged.
 */
export async function listWorkspaceItems(
  ds: DataSource, organizationId: string, filter: { status?: ProofItemStatus; productId?: string }, page: PageRequest,
) {
  const qb = ds.getRepository(ProofItem).createQueryBuilder('i')
    .where('i.organization_id = :organizationId', { organizationId })
    .andWhere(NOT_PURGED);
  if (filter.status) qb.andWhere('i.status = :status', { status: filter.status });
  else qb.andWhere(`i.status <> 'deleted'`);
  if (filter.productId) qb.andWhere('i.product_id = :productId', { productId: filter.productId });
  const result: Page<ProofItem> = await pageOf(qb, 'i', page, (row) => row);
  const originalIds = result.data.map((i) => i.originalVersionId).filter((id): id is string => id !== null);
  const originals = originalIds.length ? await ds.getRepository(ProofVersion).findBy({ id: In(originalIds) }) : [];
  const contentOf = new Map(originals.map((v) => [v.id, v.content]));
  return {
    data: result.data.map((item) => ({ ...viewItem(item), excerpt: excerptOf(contentOf.get(item.originalVersionId ?? '')) })),
    nextCursor: result.nextCursor,
  };
}

/** One item of the workspace for the console: every version (oldest first, approved or not) and its consent grants. */
export async function getWorkspaceItem(ds: DataSource, organizationId: string, id: string) {
  const item = await findItem(ds.manager, { organizationId }, id);
  const versions = await ds.getRepository(ProofVersion).find({ where: { proofItemId: id }, order: { versionNumber: 'ASC' } });
  const grants = await grantsOf(ds.manager, id);
  return {
    item: viewItem(item),
    versions: versions.map(viewVersion),
    consent: { proofItemId: item.id, status: consentStatus(item, grants), grants: grants.map(viewGrant) },
  };
}

/** Newest first. Deleted items appear only when `deleted` is asked for, and never once purged. */
export async function listItems(
  ds: DataSource, productId: string, filter: ItemFilter, page: PageRequest, expand: Expandable[], includePrivate: boolean,
) {
  const qb = ds.getRepository(ProofItem).createQueryBuilder('i')
    .where('i.product_id = :productId', { productId })
    .andWhere(NOT_PURGED);
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

export async function getItem(
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
