import { DataSource, EntityManager } from 'typeorm';
import { conflict } from '../../runtime/service-error';
import { CollectionDraft, CollectionUpload, ProofItem, ProofVersion } from '../entities';
import { ProofType } from '../entities/proof-item';
import { ProofContent } from '../entities/proof-version';
import { newId } from '../rules/ids';
import { Actor, appendProofEvent } from '../proof/proof-ledger';
import { contentHash } from '../proof/proof-items';
import { ConsentTerms, recordGrant } from '../proof/proof-consent';
import { checkDailyCeiling } from '../proof/proof-submissions';
import { DraftFields, effectiveDraftStatus, findDraft } from './drafts';
import { PinnedFlow, pinnedFlow, routeOf } from './pinned-flow';
import { controlLinkExpiry, issueStoryLink } from './control-links';
import { expired, invalidInput, uploadsOfDraft } from './uploads';
import { enqueueWorkflowCommand } from '../workflow-commands';

const DAY_MS = 86_400_000;
const CUSTOMER: Actor = { type: 'customer', id: null };

export interface SubmitContext {
  pageUrl: string;
  controlTtlDays: number;
  monthlyAllowance: number;
  dailyCeiling: number;
  ip: string;
}

/**
 * Claims a no-JavaScript form's submissionKey within its flow, in the caller's transaction: false when
 * the key was used in the last 24 hours. One statement, so of two identical posts at once the second
 * waits on the first's row and sees it (a SELECT before the insert let both through).
 */
export async function claimSubmissionKey(em: EntityManager, flowId: string, key: string): Promise<boolean> {
  const claimed: unknown[] = await em.query(
    `INSERT INTO collection_nojs_submissions (flow_id, submission_key) VALUES ($1, $2)
     ON CONFLICT (flow_id, submission_key) DO UPDATE SET created_at = now()
       WHERE collection_nojs_submissions.created_at <= now() - interval '24 hours'
     RETURNING 1`, [flowId, key]);
  return claimed.length === 1;
}

/** The grant's terms: the customer's choices within the template's terms, else the template's own. */
export function termsOf(flow: PinnedFlow, fields: DraftFields): ConsentTerms {
  const t = flow.consent?.terms;
  const p = fields.publication ?? {};
  const validityDays = t?.validityDays ?? null;
  return {
    displayMode: fields.displayMode ?? t?.displayModes[0] ?? 'full_name',
    identityFields: fields.identityFields ?? t?.identityFields ?? flow.identityFields,
    channels: p.channels ?? t?.channels ?? ['website'],
    products: { all: true },
    media: p.media ?? t?.media ?? ['text'],
    paidUseAllowed: p.paidUseAllowed ?? t?.paidUseAllowed ?? false,
    translationAllowed: p.translationAllowed ?? t?.translationAllowed ?? false,
    geography: p.geography ?? t?.geography ?? ['*'],
    validUntil: p.validUntil ?? (validityDays ? new Date(Date.now() + validityDays * DAY_MS).toISOString() : null),
    customerApprovedWording: true,
  };
}

/** Why a draft cannot be submitted yet (400), or null. */
function incompleteness(flow: PinnedFlow, fields: DraftFields, uploads: CollectionUpload[]): string | null {
  if (fields.consentAccepted !== true) return 'consentAccepted must be true';
  const missing = flow.questions.filter((q) => q.required && fields.answers?.[q.questionId] === undefined).map((q) => q.questionId);
  if (missing.length) return `required answers missing: ${missing.join(', ')}`;
  if (flow.rating?.required && fields.rating === undefined) return 'a rating is required';
  const response = uploads.some((u) => u.purpose === 'response' && u.status === 'complete');
  if (!fields.text?.trim() && !fields.title?.trim() && !response) return 'send text, a title or a complete recording';
  return null;
}

function typeOf(uploads: CollectionUpload[]): ProofType {
  const kinds = new Set(uploads.filter((u) => u.purpose === 'response' && u.status === 'complete').map((u) => u.kind));
  for (const kind of ['video', 'audio', 'image'] as const) if (kinds.has(kind)) return kind;
  return 'text';
}

const IDENTITY_ATTRIBUTION = ['name', 'company', 'title', 'location'] as const;

export interface Submission {
  submissionId: string;
  proofItemId: string;
  originalVersionId: string;
  consentGrantId: string;
  receiptId: string;
  overLimit: boolean;
  overLimitReasons: string[];
  controlToken: string;
  controlUrl: string;
  controlExpiresAt: string;
}

export interface StoredSubmission extends Submission {
  organizationId: string;
  productId: string;
  requestId: string | null;
}

/**
 * Submits a draft in one transaction: the item (`submitted`), its original, the person, the grant
 * with the consent template version and wording hash, its receipt, a routing record when scored, the
 * request `responded`, the ledger events, and a story link (the control link of this story only) returned once.
 */
export async function submitDraft(ds: DataSource, draftId: string, ctx: SubmitContext): Promise<StoredSubmission> {
  return ds.transaction(async (em) => {
    const draft = await findDraft(em, draftId, true);
    const status = effectiveDraftStatus(draft);
    if (status === 'expired') throw expired('draft');
    if (status !== 'open') throw conflict(`this draft is ${status}`);
    const uploads = await uploadsOfDraft(em, draft.id);
    if (uploads.some((u) => u.status === 'open' || u.status === 'assembling')) {
      throw conflict('an upload is still open or assembling: complete or cancel it first');
    }
    const flow = await pinnedFlow(em, draft.flowVersionId);
    const fields = draft.fields as DraftFields;
    const problem = incompleteness(flow, fields, uploads);
    if (problem) throw invalidInput(`the draft is incomplete: ${problem}`);
    await checkDailyCeiling(em, draft.organizationId, ctx.dailyCeiling);
    return storeSubmission(ds, em, draft, flow, fields, uploads, ctx);
  });
}

export async function storeSubmission(
  ds: DataSource, em: EntityManager, draft: CollectionDraft, flow: PinnedFlow, fields: DraftFields, uploads: CollectionUpload[],
  ctx: SubmitContext,
): Promise<StoredSubmission> {
  // `now` is the database clock's, read with the count: the item's stamps.
  const [{ n, now }]: Array<{ n: number; now: Date }> = await em.query(
    `SELECT count(*)::int AS n, now() AS now FROM proof_items
      WHERE product_id = $1 AND created_at >= date_trunc('month', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'`, [draft.productId]);
  const overLimitReasons = n >= ctx.monthlyAllowance ? ['monthly_submission_allowance_used_up'] : [];
  const itemId = newId('prf');
  const versionId = newId('pver');
  const personRef = draft.personRef ?? `psn_${draftId(draft)}`;
  const identity = fields.identity ?? {};
  const attribution = Object.fromEntries(IDENTITY_ATTRIBUTION.flatMap((k) => (identity[k] ? [[k, identity[k]!]] : [])));
  const complete = uploads.filter((u) => u.status === 'complete' && u.assetId);
  const content: ProofContent = {
    ...(fields.text ? { text: fields.text } : {}),
    ...(fields.title ? { title: fields.title } : {}),
    // Only a five-star rating is a rating of the story; an NPS score stays on the routing record.
    ...(fields.rating !== undefined && flow.rating?.scale === 'five_star' ? { rating: fields.rating } : {}),
    ...(complete.length ? { mediaAssetIds: complete.map((u) => u.assetId!) } : {}),
    ...(Object.keys(attribution).length ? { attribution } : {}),
    ...(fields.answers && Object.keys(fields.answers).length ? { answers: fields.answers } : {}),
  };
  const type = typeOf(uploads);
  await em.getRepository(ProofItem).insert({
    id: itemId, organizationId: draft.organizationId, productId: draft.productId, submissionId: newId('sub'), type,
    status: 'submitted', statusReason: null, statusBeforeDelete: null, customerPersonId: personRef,
    customerEmail: identity.email ?? null, customerName: identity.name ?? null, originalVersionId: versionId,
    approvedPublicVersionId: null, overLimit: overLimitReasons.length > 0, overLimitReasons,
    incentive: flow.incentive.offered ? { offered: true, ...(flow.incentive.description ? { description: String(flow.incentive.description) } : {}) }
    : { offered: false },
    verificationState: draft.verified ? 'verified_customer' : 'unverified', renderHold: false, createdByKeyId: null, updatedAt: now,
  });
  const hash = contentHash(content);
  const versions = em.getRepository(ProofVersion);
  await versions.save(versions.create({
    id: versionId, proofItemId: itemId, versionNumber: 1, isOriginal: true, content, contentHash: hash, createdByType: 'customer',
    createdById: personRef, modelId: null, changeReason: null, parentVersionId: null, locale: null, semanticDiff: {}, approvalState: 'draft',
  }));
  const item = await em.getRepository(ProofItem).findOneByOrFail({ id: itemId });
  await appendProofEvent(em, {
    organizationId: item.organizationId, productId: item.productId, proofItemId: itemId, actor: CUSTOMER,
    eventType: 'proof.response.submitted',
    properties: { itemType: type, versionId, overLimit: item.overLimit, flowId: flow.flowId, flowVersionId: flow.flowVersionId, source: draft.source },
  });
  const consentGrantId = await recordGrant(ds, em, {
    item, versionId, contentHash: hash, terms: termsOf(flow, fields), actor: CUSTOMER,
    evidence: { capturedVia: `collection_${draft.source}`, draftId: draft.id, ip: ctx.ip, at: now.toISOString() },
    ...(flow.consent ? { wording: { consentTemplateVersionId: flow.consent.consentTemplateVersionId, wordingHash: flow.consent.wordingHash } } : {}),
  });
  const [{ id: receiptId }] = await em.query(`SELECT id FROM proof_receipts WHERE consent_grant_id = $1`, [consentGrantId]);
  const route = fields.rating !== undefined ? routeOf(flow, fields.rating) : null;
  if (route) {
    const routingId = newId('rte');
    await em.query(
      `INSERT INTO proof_routings (id, organization_id, product_id, proof_item_id, flow_id, flow_version_id, request_id, scale, score, band, follow_up, state)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 'new')`,
      [routingId, item.organizationId, item.productId, itemId, flow.flowId, flow.flowVersionId, draft.requestId, route.scale, fields.rating,
        route.band, route.followUp]);
    await appendProofEvent(em, {
      organizationId: item.organizationId, productId: item.productId, proofItemId: itemId, actor: CUSTOMER,
      eventType: 'proof.response.routed', properties: { routingId, ...route },
    });
  }
  if (draft.requestId) {
    const [, answered] = (await em.query(
      `UPDATE proof_requests SET status = 'responded', responded_at = now(), updated_at = now() WHERE id = $1 AND status IN ('sent', 'reminded')`,
      [draft.requestId])) as [unknown, number];
    if (answered === 1) await enqueueWorkflowCommand(em, { type: 'proof.request.closed', requestId: draft.requestId, outcome: 'responded' });
  }
  await em.query(
    `UPDATE collection_drafts SET status = 'submitted', submitted_at = now(), proof_item_id = $2, person_ref = $3, updated_at = now() WHERE id = $1`,
    [draft.id, itemId, personRef]);
  const control = await issueStoryLink(em, { organizationId: item.organizationId, productId: item.productId, personRef }, itemId, ctx.pageUrl,
    controlLinkExpiry(ctx.controlTtlDays));
  return {
    submissionId: item.submissionId, proofItemId: itemId, originalVersionId: versionId, consentGrantId, receiptId,
    overLimit: item.overLimit, overLimitReasons: item.overLimitReasons, ...control,
    organizationId: item.organizationId, productId: item.productId, requestId: draft.requestId,
  };
}

const draftId = (d: CollectionDraft) => d.id.slice(d.id.indexOf('_') + 1);
