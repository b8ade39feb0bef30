import { DataSource, EntityManager } from 'typeorm';
import { ServiceError, conflict, notFound } from '../../runtime/service-error';
import { CollectionDraft, CollectionUpload } from '../entities';
import { DraftSource } from '../entities/collection-draft';
import { newId } from '../rules/ids';
import { enqueueEvent } from '../outbox';
import { enqueueWorkflowCommand } from '../workflow-commands';
import { sha256Hex } from '../rules/secrets';
import { PinnedFlow, liveFlow, optedOut, pinnedFlow, publicFlow } from './pinned-flow';
import { issueSecret, useSecret, lookupSecret } from './secrets';
import { expired, invalidInput, uploadsOfDraft } from './uploads';
import { databaseNow } from '../clock';

const DAY_MS = 86_400_000;

export interface DraftFields {
  text?: string;
  title?: string;
  rating?: number;
  consentAccepted?: boolean;
  answers?: Record<string, string | boolean>;
  identity?: { name?: string; company?: string; title?: string; location?: string; email?: string };
  displayMode?: string;
  identityFields?: string[];
  publication?: {
    channels?: string[]; media?: string[]; paidUseAllowed?: boolean; translationAllowed?: boolean;
    geography?: string[]; validUntil?: string | null;
  };
}

export type DraftPatch = Omit<DraftFields, 'answers'> & { answers?: Record<string, string | boolean | null>; revision?: number };

export function viewDraft(d: CollectionDraft, uploads: CollectionUpload[]) {
  return {
    id: d.id,
    flowId: d.flowId,
    flowVersionId: d.flowVersionId,
    status: effectiveDraftStatus(d),
    revision: d.revision,
    expiresAt: d.expiresAt.toISOString(),
    submittedAt: d.submittedAt?.toISOString() ?? null,
    proofItemId: d.proofItemId,
    uploads: uploads.filter((u) => u.status !== 'cancelled').map((u) => ({
      id: u.id, kind: u.kind, purpose: u.purpose, status: u.status, assetId: u.assetId,
    })),
    ...(d.fields as DraftFields),
  };
}

export function effectiveDraftStatus(d: CollectionDraft, now = new Date()): CollectionDraft['status'] {
  return d.status === 'open' && d.expiresAt.getTime() <= now.getTime() ? 'expired' : d.status;
}

/** Suppressed recipients of a product, by any key they may be asked under. */
export const recipientKeys = (r: { email?: string | null; endUserId?: string | null; personRef?: string | null }) => [
  ...(r.email ? [`email:${r.email.toLowerCase()}`] : []),
  ...(r.endUserId ? [`end_user:${r.endUserId}`] : []),
  ...(r.personRef ? [`person:${r.personRef}`] : []),
];

export async function isSuppressed(em: EntityManager | DataSource, productId: string, keys: string[]): Promise<boolean> {
  if (keys.length === 0) return false;
  const rows: unknown[] = await em.query(
    `SELECT 1 FROM collection_suppressions WHERE product_id = $1 AND recipient_key = ANY($2)`, [productId, keys]);
  return rows.length > 0;
}

export interface NewDraft {
  flow: PinnedFlow;
  source: DraftSource;
  verified: boolean;
  requestId?: string | null;
  personRef?: string | null;
  endUserId?: string | null;
  identity?: DraftFields['identity'];
}

async function insertDraft(em: EntityManager, input: NewDraft, ttlDays: number): Promise<CollectionDraft> {
  const id = newId('drf');
  const now = await databaseNow(em);
  const identity = Object.fromEntries(Object.entries(input.identity ?? {}).filter(([, v]) => typeof v === 'string' && v));
  await em.getRepository(CollectionDraft).insert({
    id, organizationId: input.flow.organizationId, productId: input.flow.productId, flowId: input.flow.flowId,
    flowVersionId: input.flow.flowVersionId, requestId: input.requestId ?? null, personRef: input.personRef ?? null,
    endUserId: input.endUserId ?? null, source: input.source, verified: input.verified, status: 'open', revision: 1,
    fields: Object.keys(identity).length ? { identity } : {}, proofItemId: null, submittedAt: null,
    expiresAt: new Date(now.getTime() + ttlDays * DAY_MS), updatedAt: now,
  });
  return em.getRepository(CollectionDraft).findOneByOrFail({ id });
}

async function withSession(em: EntityManager, draft: CollectionDraft, flow: PinnedFlow) {
  const draftSession = await issueSecret(em, 'draft_session', {
    organizationId: draft.organizationId, productId: draft.productId, draftId: draft.id,
  });
  return { draft: viewDraft(draft, await uploadsOfDraft(em, draft.id)), draftSession, flow: publicFlow(flow) };
}

/** A public draft on a live flow's latest version. */
export async function startPublicDraft(ds: DataSource, publicId: string, ttlDays: number) {
  return ds.transaction(async (em) => {
    const flow = await liveFlow(em, publicId);
    return withSession(em, await insertDraft(em, { flow, source: 'public', verified: false }, ttlDays), flow);
  });
}

/** A known end user's or integration's draft (JWT or key session): verified, with the person prefilled. */
export async function startKnownDraft(
  ds: DataSource, input: { publicId: string; productId: string; source: 'end_user' | 'key'; personRef: string | null; endUserId: string | null;
    identity?: DraftFields['identity']; }, ttlDays: number,
) {
  return ds.transaction(async (em) => {
    const flow = await liveFlow(em, input.publicId, input.productId);
    const keys = recipientKeys({ email: input.identity?.email, endUserId: input.endUserId, personRef: input.personRef });
    if (await isSuppressed(em, flow.productId, keys)) throw optedOut();
    const draft = await insertDraft(em, {
      flow, source: input.source, verified: true, personRef: input.personRef ?? (input.endUserId ? `end_user:${input.endUserId}` : null),
      endUserId: input.endUserId, identity: input.identity,
    }, ttlDays);
    return { ...(await withSession(em, draft, flow)), pinned: flow };
  });
}

interface RequestRow {
  id: string; organization_id: string; product_id: string; flow_version_id: string; status: string; expires_at: Date | null;
  recipient: { email?: string; endUserId?: string; personRef?: string; name?: string }; updated_at: Date;
}

/** The personal request a `pr_` token names, or null. */
export async function requestByToken(em: EntityManager | DataSource, token: string): Promise<RequestRow | null> {
  // The link returned at creation, or one the service mailed (proof_request_tokens).
  const rows: RequestRow[] = await em.query(
    `SELECT * FROM proof_requests WHERE link_token_hash = $1
        OR id = (SELECT request_id FROM proof_request_tokens WHERE digest = $1)`, [sha256Hex(token)]);
  return rows[0] ?? null;
}

const OPT_OUT_DAYS = 365;

/**
 * A personal link opens (or reopens) the recipient's draft, pinned to the request's version: one open
 * draft per request, each call a new session for it (200), the first one 201.
 */
export async function startRequestDraft(ds: DataSource, token: string, ttlDays: number) {
  return ds.transaction(async (em) => {
    const request = await requestByToken(em, token);
    if (!request) throw new ServiceError('UNAUTHORIZED', 'this personal link is not recognised');
    const locked: RequestRow[] = await em.query(`SELECT * FROM proof_requests WHERE id = $1 FOR UPDATE`, [request.id]);
    const r = locked[0];
    const keys = recipientKeys(r.recipient);
    if (r.status === 'opted_out' || await isSuppressed(em, r.product_id, keys)) throw optedOut();
    if (r.status === 'expired' || (r.expires_at && r.expires_at.getTime() <= Date.now())) throw expired('personal link');
    if (r.status !== 'sent' && r.status !== 'reminded') throw conflict(`this request is ${r.status}`);
    const flow = await pinnedFlow(em, r.flow_version_id);
    const open = await em.getRepository(CollectionDraft).findOne({ where: { requestId: r.id, status: 'open' }, order: { createdAt: 'DESC' } });
    if (open && effectiveDraftStatus(open) === 'open') return { created: false, ...(await withSession(em, open, flow)) };
    const draft = await insertDraft(em, {
      flow, source: 'link', verified: true, requestId: r.id, personRef: r.recipient.personRef ?? r.recipient.endUserId
        ?? (r.recipient.email ? `email:${r.recipient.email.toLowerCase()}` : null),
      endUserId: r.recipient.endUserId ?? null, identity: { name: r.recipient.name, email: r.recipient.email },
    }, ttlDays);
    return { created: true, ...(await withSession(em, draft, flow)) };
  });
}

/** Opt-out by personal link: suppresses every later ask to the recipient; works for 365 days whatever the status. */
export async function optOut(ds: DataSource, token: string) {
  return ds.transaction(async (em) => {
    const request = await requestByToken(em, token);
    if (!request) throw new ServiceError('UNAUTHORIZED', 'this personal link is not recognised');
    if (Date.now() - request.updated_at.getTime() > OPT_OUT_DAYS * DAY_MS && request.status !== 'sent' && request.status !== 'reminded') {
      throw expired('personal link');
    }
    for (const key of recipientKeys(request.recipient)) {
      await em.query(
        `INSERT INTO collection_suppressions (organization_id, product_id, recipient_key, via, request_id) VALUES ($1, $2, $3, 'opt_out', $4)
         ON CONFLICT DO NOTHING`, [request.organization_id, request.product_id, key, request.id]);
    }
    const [, changed] = (await em.query(
      `UPDATE proof_requests SET status = 'opted_out', closed_at = now(), updated_at = now()
        WHERE id = $1 AND status IN ('draft', 'sent', 'reminded')`, [request.id])) as [unknown, number];
    if (changed === 1) {
      await enqueueEvent(em, {
        organizationId: request.organization_id, productId: request.product_id, type: 'proof.request.opted_out',
        data: { requestId: request.id, via: 'opt_out' },
      });
      await enqueueWorkflowCommand(em, { type: 'proof.request.closed', requestId: request.id, outcome: 'opted_out' });
    }
    return { requestId: request.id, changed: changed === 1 };
  });
}

/** The draft a draft session names, locked when asked; expired on the clock as well as by the sweep. */
export async function findDraft(em: EntityManager | DataSource, id: string, lock = false): Promise<CollectionDraft> {
  const draft = await em.getRepository(CollectionDraft).findOne({ where: { id }, ...(lock ? { lock: { mode: 'pessimistic_write' as const } } : {}) });
  if (!draft) throw notFound('draft');
  return draft;
}

export async function readDraft(ds: DataSource, draft: CollectionDraft) {
  const flow = await pinnedFlow(ds.manager, draft.flowVersionId);
  return { draft: viewDraft(draft, await uploadsOfDraft(ds, draft.id)), flow: publicFlow(flow) };
}

function assertOpen(draft: CollectionDraft): void {
  const status = effectiveDraftStatus(draft);
  if (status === 'expired') throw expired('draft');
  if (status !== 'open') throw conflict(`this draft is ${status}`);
}

const FIVE_STAR = [1, 5];
const NPS = [0, 10];

/** Checks a patch against the pinned version: answers by question kind, rating by scale, terms by template. */
function checkPatch(flow: PinnedFlow, patch: DraftPatch): void {
  const questions = new Map(flow.questions.map((q) => [q.questionId, q]));
  for (const [questionId, value] of Object.entries(patch.answers ?? {})) {
    const q = questions.get(questionId);
    if (!q) throw invalidInput(`answers.${questionId} is not a question of this flow`);
    if (value === null) continue;
    if (q.kind === 'yes_no') {
      if (typeof value !== 'boolean') throw invalidInput(`answers.${questionId} must be true or false`);
    } else if (typeof value !== 'string') throw invalidInput(`answers.${questionId} must be text`);
    else if (q.kind === 'short_text' && value.length > 280) throw invalidInput(`answers.${questionId} is at most 280 characters`);
    else if (q.kind === 'long_text' && value.length > 10_000) throw invalidInput(`answers.${questionId} is at most 10000 characters`);
    else if (q.kind === 'choice' && !(q.options ?? []).includes(value)) throw invalidInput(`answers.${questionId} must be one of the options`);
  }
  if (patch.rating !== undefined) {
    if (!flow.rating) throw invalidInput('this flow asks for no rating');
    const [min, max] = flow.rating.scale === 'nps' ? NPS : FIVE_STAR;
    if (!Number.isInteger(patch.rating) || patch.rating < min || patch.rating > max) {
      throw invalidInput(`rating is a whole number from ${min} to ${max} on the ${flow.rating.scale} scale`);
    }
  }
  const terms = flow.consent?.terms;
  if (!terms) return;
  if (patch.displayMode !== undefined && !terms.displayModes.includes(patch.displayMode)) {
    throw invalidInput(`displayMode must be one of ${terms.displayModes.join(', ')}`);
  }
  const within = (field: string, values: string[] | undefined, allowed: string[]) => {
    const outside = (values ?? []).filter((v) => !allowed.includes(v) && !allowed.includes('*'));
    if (outside.length) throw invalidInput(`${field} goes beyond the consent terms: ${outside.join(', ')}`);
  };
  within('identityFields', patch.identityFields, terms.identityFields);
  const p = patch.publication;
  if (!p) return;
  within('publication.channels', p.channels, terms.channels);
  within('publication.media', p.media, terms.media);
  within('publication.geography', p.geography, terms.geography);
  if (p.paidUseAllowed === true && !terms.paidUseAllowed) throw invalidInput('publication.paidUseAllowed goes beyond the consent terms');
  if (p.translationAllowed === true && !terms.translationAllowed) throw invalidInput('publication.translationAllowed goes beyond the consent terms');
  if (p.validUntil && terms.validityDays !== null && Date.parse(p.validUntil) > Date.now() + terms.validityDays * DAY_MS) {
    throw invalidInput(`publication.validUntil is at most ${terms.validityDays} days ahead`);
  }
}

/** Auto-save: merges the fields (a null answer removes it); `revision`, when sent, must be the current one. */
export async function patchDraft(ds: DataSource, draftId: string, patch: DraftPatch, ttlDays: number) {
  return ds.transaction(async (em) => {
    const draft = await findDraft(em, draftId, true);
    assertOpen(draft);
    if (patch.revision !== undefined && patch.revision !== draft.revision) {
      throw conflict(`stale revision: the draft is at revision ${draft.revision}`);
    }
    const flow = await pinnedFlow(em, draft.flowVersionId);
    checkPatch(flow, patch);
    const { revision: _revision, answers, identity, publication, ...rest } = patch;
    const fields = { ...(draft.fields as DraftFields), ...rest } as DraftFields;
    if (identity) fields.identity = { ...fields.identity, ...identity };
    if (publication) fields.publication = { ...fields.publication, ...publication };
    if (answers) {
      const merged: Record<string, string | boolean> = { ...fields.answers };
      for (const [k, v] of Object.entries(answers)) {
        if (v === null) delete merged[k];
        else merged[k] = v;
      }
      fields.answers = merged;
    }
    await em.query(
      `UPDATE collection_drafts SET fields = $2, revision = revision + 1, updated_at = now(), expires_at = now() + $3 * interval '1 millisecond'
        WHERE id = $1`,
      [draft.id, JSON.stringify(fields), ttlDays * DAY_MS]);
    const saved = await findDraft(em, draft.id);
    return { draft: viewDraft(saved, await uploadsOfDraft(em, draft.id)), flow: publicFlow(flow) };
  });
}

const CONTINUATION_DAYS = 7;

/** A single-use link to go on on another device: 7 days, dies with the draft. */
export async function issueContinuation(ds: DataSource, draftId: string, pageUrl: string) {
  return ds.transaction(async (em) => {
    const draft = await findDraft(em, draftId, true);
    assertOpen(draft);
    const expiresAt = new Date(Date.now() + CONTINUATION_DAYS * DAY_MS);
    const continuationToken = await issueSecret(em, 'continuation', {
      organizationId: draft.organizationId, productId: draft.productId, draftId: draft.id, expiresAt,
    });
    return { continuationToken, continuationUrl: `${pageUrl}/continue#${continuationToken}`, expiresAt: expiresAt.toISOString() };
  });
}

/** Redeems a continuation link (once) for a fresh draft session on the same draft. */
export async function redeemContinuation(ds: DataSource, token: string) {
  return ds.transaction(async (em) => {
    const secret = await lookupSecret(em, 'continuation', token);
    if (!secret || !secret.draftId) throw new ServiceError('UNAUTHORIZED', 'this continuation link is not recognised');
    if (secret.usedAt) throw new ServiceError('ALREADY_USED', 'this continuation link was already used');
    if (secret.expiresAt && secret.expiresAt.getTime() <= Date.now()) throw expired('continuation link');
    const draft = await findDraft(em, secret.draftId, true);
    if (effectiveDraftStatus(draft) === 'expired') throw expired('draft');
    if (draft.status !== 'open') throw conflict(`this draft is ${draft.status}`);
    if (!(await useSecret(em, secret.digest))) throw new ServiceError('ALREADY_USED', 'this continuation link was already used');
    return withSession(em, draft, await pinnedFlow(em, draft.flowVersionId));
  });
}
