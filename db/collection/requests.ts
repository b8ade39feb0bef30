import { DataSource, EntityManager } from 'typeorm';
import { ServiceError, conflict, notFound, validationFailed } from '../../runtime/service-error';
import { ProofRequest } from '../entities';
import { RequestChannel, RequestRecipient } from '../entities/proof-request';
import { SYSTEM_ACTOR, appendProofEvent } from '../proof/proof-ledger';
import { newId } from '../rules/ids';
import { newSecret, sha256Hex } from '../rules/secrets';
import { PageRequest } from '../pagination';
import { findFlow } from './flows';
import { pageRows } from './scope';
import { enqueueWorkflowCommand } from '../workflow-commands';
import { databaseNow, dbNow } from '../clock';

export const LINK_TOKEN_PREFIX = 'pr';
export const DEFAULT_EXPIRES_IN_DAYS = 30;

export interface NewRequest {
  flowId: string;
  channel: RequestChannel;
  recipient: RequestRecipient;
  message?: string;
  expiresInDays?: number;
}

export interface Creator { organizationId: string; createdBy: { type: string; id: string | null } }

export const optedOut = () => new ServiceError('OPTED_OUT', 'the recipient asked not to be contacted', { reason: 'opted_out' });

export const linkUrlOf = (collectPageUrl: string, token: string) => `${collectPageUrl}/r#${token}`;

export function viewRequest(r: ProofRequest) {
  const iso = (d: Date | null) => d?.toISOString() ?? null;
  return {
    id: r.id,
    productId: r.productId,
    flowId: r.flowId,
    formId: r.flowId,
    flowVersionId: r.flowVersionId,
    channel: r.channel,
    recipient: r.recipient,
    recipientId: r.recipientId,
    message: r.message,
    status: r.status,
    expiresInDays: r.expiresInDays,
    remindAfterDays: r.remindAfterDays,
    opportunityId: r.opportunityId,
    bulkId: r.bulkId,
    createdBy: r.createdBy,
    sentAt: iso(r.sentAt),
    remindedAt: iso(r.remindedAt),
    expiresAt: iso(r.expiresAt),
    respondedAt: iso(r.respondedAt),
    closedAt: iso(r.closedAt),
    createdAt: r.createdAt.toISOString(),
    updatedAt: r.updatedAt.toISOString(),
  };
}

/** What a key is answered about a request: everything but `recipient`, whose e-mail and name no key scope grants. */
export function viewKeyRequest(r: ProofRequest) {
  const { recipient: _recipient, ...view } = viewRequest(r);
  return view;
}

/** The keys a recipient may be suppressed under (the same as the opt-out writes). */
export const recipientKeys = (r: RequestRecipient) => [
  ...(r.email ? [`email:${r.email.toLowerCase()}`] : []),
  ...(r.endUserId ? [`end_user:${r.endUserId}`] : []),
  ...(r.personRef ? [`person:${r.personRef}`] : []),
];

export async function recipientSuppressed(em: EntityManager, productId: string, r: RequestRecipient): Promise<boolean> {
  const keys = recipientKeys(r);
  if (keys.length === 0) return false;
  const rows: unknown[] = await em.query(
    'SELECT 1 FROM collection_suppressions WHERE product_id = $1 AND recipient_key = ANY($2)', [productId, keys]);
  return rows.length > 0;
}

/** Why a recipient cannot be asked on a channel, as a field issue, or null. */
export function recipientIssue(channel: RequestChannel, r: RequestRecipient, path = 'recipient'): { path: string; message: string } | null {
  if (channel === 'email' && !r.email) return { path: `${path}.email`, message: 'an e-mail request needs the recipient\'s email' };
  if (channel === 'in_app' && !r.endUserId) return { path: `${path}.endUserId`, message: 'an in-app request needs the recipient\'s endUserId' };
  return null;
}

/** Issues a `pr_` secret for the request; only its SHA-256 is kept. */
async function mintToken(em: EntityManager, requestId: string, source: 'initial' | 'reminder' | null): Promise<string> {
  const token = newSecret(LINK_TOKEN_PREFIX);
  if (source === null) await em.query('UPDATE proof_requests SET link_token_hash = $2 WHERE id = $1', [requestId, sha256Hex(token)]);
  else await em.query('INSERT INTO proof_request_tokens (digest, request_id, source) VALUES ($1, $2, $3)', [sha256Hex(token), requestId, source]);
  return token;
}

/**
 * A draft personal request pinned to the flow's live version, with its link secret (returned once).
 * Nothing is sent: a person sends it.
 */
export async function createRequestIn(
  em: EntityManager, who: Creator, body: NewRequest, extra: { bulkId?: string; opportunityId?: string } = {},
) {
  const request = await insertDraftRequest(em, who, body, extra);
  const linkToken = await mintToken(em, request.id, null);
  return { request, linkToken };
}

/** The draft request without a link secret: a key never receives one (docs/ai.md#requests-and-reply-capture); the person who sends it does. */
export async function insertDraftRequest(
  em: EntityManager, who: Creator, body: NewRequest, extra: { bulkId?: string; opportunityId?: string } = {},
): Promise<ProofRequest> {
  const flow = await findFlow(em, who.organizationId, body.flowId);
  if (flow.state !== 'live' || !flow.liveVersionId) throw conflict('the flow is not live');
  const issue = recipientIssue(body.channel, body.recipient);
  if (issue) throw validationFailed([issue]);
  if (await recipientSuppressed(em, flow.productId, body.recipient)) throw optedOut();
  const row = draftRequestRow(who, { id: flow.id, productId: flow.productId, liveVersionId: flow.liveVersionId }, body, extra);
  await em.getRepository(ProofRequest).insert(row);
  return em.getRepository(ProofRequest).findOneByOrFail({ id: row.id });
}

/** The row of a new draft request on a live flow's live version; callers have checked the flow, the recipient and suppressions. */
export function draftRequestRow(
  who: Creator, flow: { id: string; productId: string; liveVersionId: string }, body: NewRequest,
  extra: { bulkId?: string; opportunityId?: string } = {},
) {
  return {
    id: newId('prq'),
    organizationId: who.organizationId,
    productId: flow.productId,
    flowId: flow.id,
    flowVersionId: flow.liveVersionId,
    channel: body.channel,
    recipient: body.recipient,
    recipientId: body.recipient.endUserId ?? body.recipient.personRef ?? null,
    message: body.message ?? null,
    expiresInDays: body.expiresInDays ?? DEFAULT_EXPIRES_IN_DAYS,
    status: 'draft' as const,
    linkTokenHash: null,
    opportunityId: extra.opportunityId ?? null,
    bulkId: extra.bulkId ?? null,
    createdBy: who.createdBy,
    updatedAt: dbNow,
  };
}

export async function createRequest(ds: DataSource, who: Creator, body: NewRequest) {
  return ds.transaction((em) => createRequestIn(em, who, body));
}

/** Many draft requests at once; a recipient who opted out (or is invalid for the channel) is skipped, not an error. */
export async function createBulk(
  ds: DataSource, who: Creator, body: { flowId: string; channel: RequestChannel; message?: string; recipients: RequestRecipient[] },
) {
  return ds.transaction(async (em) => {
    const flow = await findFlow(em, who.organizationId, body.flowId);
    if (flow.state !== 'live' || !flow.liveVersionId) throw conflict('the flow is not live');
    const bulkId = newId('blk');
    const created: Array<{ index: number; request: ProofRequest; linkToken: string }> = [];
    const skipped: Array<{ index: number; reason: string }> = [];
    for (const [index, recipient] of body.recipients.entries()) {
      if (recipientIssue(body.channel, recipient)) { skipped.push({ index, reason: 'missing_contact' }); continue; }
      if (await recipientSuppressed(em, flow.productId, recipient)) { skipped.push({ index, reason: 'opted_out' }); continue; }
      const made = await createRequestIn(em, who, { flowId: body.flowId, channel: body.channel, recipient, message: body.message }, { bulkId });
      created.push({ index, ...made });
    }
    return { created, skipped };
  });
}

async function findRequest(em: EntityManager, organizationId: string, id: string, lock = false) {
  const r = await em.getRepository(ProofRequest).findOne({
    where: { id, organizationId }, ...(lock ? { lock: { mode: 'pessimistic_write' as const } } : {}),
  });
  if (!r) throw notFound('request');
  return r;
}

export async function getRequest(ds: DataSource, organizationId: string, id: string) {
  return findRequest(ds.manager, organizationId, id);
}

export async function listRequests(ds: DataSource, organizationId: string, query: PageRequest & { status?: string; flowId?: string }) {
  const page = await pageRows(ds, ProofRequest, organizationId, { status: query.status, flow_id: query.flowId }, query);
  return { data: page.data.map(viewRequest), nextCursor: page.nextCursor };
}

const DELIVERED: readonly RequestChannel[] = ['email', 'in_app'];
export const isDelivered = (channel: RequestChannel) => DELIVERED.includes(channel);

/**
 * draft → sent. The service delivers e-mail and in-app itself (the workflow); other channels get a
 * link for the person to pass on, with its secret only when none was issued before.
 */
export async function markSent(ds: DataSource, organizationId: string, id: string, remindAfterDays: number | undefined, dayMs: number) {
  return ds.transaction(async (em) => {
    const r = await findRequest(em, organizationId, id, true);
    if (r.status !== 'draft') throw conflict(`the request is ${r.status}; only a draft is sent`);
    if (await recipientSuppressed(em, r.productId, r.recipient)) throw optedOut();
    const now = await databaseNow(em);
    const expiresAt = new Date(now.getTime() + r.expiresInDays * dayMs);
    await em.getRepository(ProofRequest).update({ id }, {
      status: 'sent', sentAt: now, expiresAt, remindAfterDays: remindAfterDays ?? null, updatedAt: now,
    });
    let linkToken: string | null = null;
    if (!isDelivered(r.channel) && r.linkTokenHash === null) linkToken = await mintToken(em, id, null);
    const sent = await em.getRepository(ProofRequest).findOneByOrFail({ id });
    if (!isDelivered(sent.channel)) await announceSent(em, sent, false);
    // The reminder and expiry timers start only if this commits; the worker's relay starts them.
    await enqueueWorkflowCommand(em, {
      type: 'proof.request.start', tenant: { organizationId: sent.organizationId, productId: sent.productId }, ...requestWorkflowInput(sent, dayMs),
    });
    return { request: sent, linkToken };
  });
}

/** What `proof-request/<id>` is started with, read off a sent request (the outbox start and a reminder's start agree). */
export function requestWorkflowInput(r: ProofRequest, dayMs: number) {
  return {
    requestId: r.id, delivered: isDelivered(r.channel),
    remindAfterMs: r.remindAfterDays === null ? null : r.remindAfterDays * dayMs, expiresAt: r.expiresAt!.toISOString(),
  };
}

export async function announceSent(em: EntityManager, r: ProofRequest, reminder: boolean) {
  await appendProofEvent(em, {
    organizationId: r.organizationId, productId: r.productId, proofItemId: null, actor: SYSTEM_ACTOR,
    eventType: 'proof.request.sent', properties: { requestId: r.id, channel: r.channel, reminder },
  });
}

/** draft, sent or reminded → cancelled. */
export async function cancelRequest(ds: DataSource, organizationId: string, id: string) {
  return ds.transaction(async (em) => {
    const r = await findRequest(em, organizationId, id, true);
    if (!['draft', 'sent', 'reminded'].includes(r.status)) throw conflict(`the request is ${r.status}`);
    await em.getRepository(ProofRequest).update({ id }, { status: 'cancelled', closedAt: dbNow, updatedAt: dbNow });
    await enqueueWorkflowCommand(em, { type: 'proof.request.closed', requestId: id, outcome: 'cancelled' });
    return em.getRepository(ProofRequest).findOneByOrFail({ id });
  });
}

/** The request a `pr_` secret names: the one returned at creation or one the service mailed. */
export async function requestIdByLinkToken(em: EntityManager | DataSource, token: string): Promise<string | null> {
  const digest = sha256Hex(token);
  const rows: Array<{ id: string }> = await em.query(
    `SELECT id FROM proof_requests WHERE link_token_hash = $1
     UNION ALL SELECT request_id FROM proof_request_tokens WHERE digest = $1 LIMIT 1`, [digest]);
  return rows[0]?.id ?? null;
}

// --- delivery, used by the proof-request workflow's activities ---

export interface DeliveryPlan {
  request: ProofRequest;
  linkToken: string;
}

/**
 * Claims one delivery of a kind. The initial message and the reminder each exist once per request
 * (primary key); a delivery already done answers null, so a retried activity never sends twice.
 * The reminder is claimed only while the request is `sent` and not yet reminded.
 */
export async function claimDelivery(ds: DataSource, requestId: string, kind: 'initial' | 'reminder'): Promise<DeliveryPlan | null> {
  return ds.transaction(async (em) => {
    const r = await em.getRepository(ProofRequest).findOne({ where: { id: requestId }, lock: { mode: 'pessimistic_write' } });
    if (!r) return null;
    const [row] = await em.query('SELECT delivered_at FROM proof_request_deliveries WHERE request_id = $1 AND kind = $2', [requestId, kind]);
    if (row?.delivered_at) return null;
    if (kind === 'initial' && r.status !== 'sent') return null;
    if (kind === 'reminder' && !row) {
      if (r.status !== 'sent' || r.remindedAt !== null) return null;
      if (r.expiresAt && r.expiresAt.getTime() <= Date.now()) return null;
    }
    await em.query(
      `INSERT INTO proof_request_deliveries (request_id, kind, channel) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
      [requestId, kind, r.channel]);
    return { request: r, linkToken: await mintToken(em, requestId, kind) };
  });
}

/** Marks a claimed delivery done; for the reminder, the request becomes `reminded` (at most once). */
export async function completeDelivery(ds: DataSource, requestId: string, kind: 'initial' | 'reminder'): Promise<void> {
  await ds.transaction(async (em) => {
    const [, changed] = (await em.query(
      `UPDATE proof_request_deliveries SET delivered_at = now() WHERE request_id = $1 AND kind = $2 AND delivered_at IS NULL`,
      [requestId, kind])) as [unknown, number];
    if (changed !== 1) return;
    const r = await em.getRepository(ProofRequest).findOneByOrFail({ id: requestId });
    if (kind === 'reminder') {
      await em.query(
        `UPDATE proof_requests SET status = 'reminded', reminded_at = now(), updated_at = now()
          WHERE id = $1 AND status = 'sent' AND reminded_at IS NULL`, [requestId]);
    }
    await announceSent(em, r, kind === 'reminder');
  });
}

/** A request still `sent` or `reminded` past its `expiresAt` becomes `expired`. */
export async function expireRequest(ds: DataSource, requestId: string): Promise<void> {
  await ds.query(
    `UPDATE proof_requests SET status = 'expired', closed_at = now(), updated_at = now()
      WHERE id = $1 AND status IN ('sent', 'reminded') AND expires_at <= now()`, [requestId]);
}

export async function requestStatus(ds: DataSource, requestId: string): Promise<{ status: string; remindedAt: Date | null; expiresAt: Date | null } | null> {
  const r = await ds.getRepository(ProofRequest).findOneBy({ id: requestId });
  return r ? { status: r.status, remindedAt: r.remindedAt, expiresAt: r.expiresAt } : null;
}
