import { DataSource, EntityManager, In } from 'typeorm';
import { ServiceError, conflict, notFound } from '../../runtime/service-error';
import { ConsentGrant, ProofApprovalRequest, ProofItem, ProofPlacement, ProofRevocation, ProofVersion } from '../entities';
import { CANONICALIZATION } from '../rules/canonical-json';
import { newId } from '../rules/ids';
import { ApprovalRef } from '../proof/proof-approvals';
import { Actor, announceDirectly, appendProofEvent } from '../proof/proof-ledger';
import { assertChangeable, grantsOf, viewGrant } from '../proof/proof-items';
import { ConsentTerms, recordGrant } from '../proof/proof-consent';
import { IMMEDIATE_POLICY_ACTION } from '../proof/proof-revocations';
import { decideEntry, loadPlacement } from '../proof/proof-placements';
import { readReceipt } from '../proof/proof-receipts';
import { activeSigningKey, signCanonical } from '../proof/proof-signing';
import { enqueueWorkflowCommand } from '../workflow-commands';
import { recoveryClosed } from '../rules/proof-status';
import { databaseNow, dbNow } from '../clock';

const CUSTOMER: Actor = { type: 'customer', id: null };

/** One person in one product. */
export interface Person { organizationId: string; productId: string; personRef: string }

/**
 * What a control link reaches (docs/collection.md#story-links-and-person-links): a story link only the story of its own submission
 * (`proofItemId`), a person link (`proofItemId` null) all of the person's stories in the product.
 */
export interface ControlReach extends Person { proofItemId: string | null }

/** One of the items the link reaches; anything else (another story, person or product) is 404. */
async function personItem(em: EntityManager, person: ControlReach, itemId: string, lock = false): Promise<ProofItem> {
  if (person.proofItemId !== null && person.proofItemId !== itemId) throw notFound('story');
  const item = await em.getRepository(ProofItem).findOne({
    where: { id: itemId, organizationId: person.organizationId, productId: person.productId, customerPersonId: person.personRef },
    ...(lock ? { lock: { mode: 'pessimistic_write' as const } } : {}),
  });
  if (!item || item.status === 'deleted' || recoveryClosed(item)) throw notFound('story');
  return item;
}

interface DecisionRow { version_id: string; decision: string }

async function pendingApprovals(em: EntityManager, item: ProofItem, grants: ConsentGrant[]) {
  if (item.status === 'revoked') return [];
  const versions = await em.getRepository(ProofVersion).find({ where: { proofItemId: item.id }, order: { versionNumber: 'ASC' } });
  const decisions: DecisionRow[] = await em.query(`SELECT version_id, decision FROM collection_customer_decisions WHERE proof_item_id = $1`, [item.id]);
  const decided = new Set(decisions.map((d) => d.version_id));
  const active = grants.find((g) => g.state === 'active');
  const approvedNumber = versions.find((v) => v.id === active?.approvedVersionId)?.versionNumber ?? 1;
  return versions
    .filter((v) => !v.isOriginal && v.approvalState !== 'rejected' && !decided.has(v.id) && v.versionNumber > approvedNumber)
    .map((v) => ({ versionId: v.id, versionNumber: v.versionNumber, content: v.content, contentHash: v.contentHash, semanticDiff: v.semanticDiff }));
}

async function story(em: EntityManager, item: ProofItem) {
  const grants = await grantsOf(em, item.id);
  const currentId = item.approvedPublicVersionId ?? item.originalVersionId;
  const current = currentId ? await em.getRepository(ProofVersion).findOneBy({ id: currentId }) : null;
  const [{ n }] = await em.query(
    `SELECT count(*)::int AS n FROM proof_placement_items pi JOIN proof_placements p ON p.id = pi.placement_id
      WHERE pi.proof_item_id = $1 AND pi.state = 'active' AND p.state = 'active'`, [item.id]);
  const corrections: Array<Record<string, any>> = await em.query(
    `SELECT id, status, message, note, closed_at FROM proof_corrections WHERE proof_item_id = $1 ORDER BY created_at, id`, [item.id]);
  return {
    proofItemId: item.id,
    type: item.type,
    status: item.status,
    paused: item.customerPausedAt !== null,
    revokedAt: item.revokedAt?.toISOString() ?? null,
    currentVersion: current && item.status !== 'revoked'
      ? { id: current.id, versionNumber: current.versionNumber, content: current.content, contentHash: current.contentHash }
      : null,
    pendingApprovals: await pendingApprovals(em, item, grants),
    activeUseCount: n,
    consent: grants.length ? viewGrant(grants[0]) : null,
    corrections: corrections.map((c) => ({
      id: c.id, status: c.status, message: c.message, note: c.note, closedAt: c.closed_at ? new Date(c.closed_at).toISOString() : null,
    })),
  };
}

/** The control page: the person (as they gave themselves) and every story the link reaches, newest first. */
export async function controlView(ds: DataSource, person: ControlReach) {
  const query = ds.getRepository(ProofItem).createQueryBuilder('i')
    .where('i.organization_id = :o AND i.product_id = :p AND i.customer_person_id = :r',
      { o: person.organizationId, p: person.productId, r: person.personRef })
    .andWhere(`i.status <> 'deleted'`);
  if (person.proofItemId !== null) query.andWhere('i.id = :id', { id: person.proofItemId });
  const items = await query
    .orderBy('i.created_at', 'DESC').addOrderBy('i.id', 'DESC')
    .take(100)
    .getMany();
  const latest = items[0];
  return {
    person: { name: latest?.customerName ?? null, email: latest?.customerEmail ?? null },
    stories: await Promise.all(items.map((item) => story(ds.manager, item))),
  };
}

export interface Withdrawal {
  result: { requestOnly: false; revocation: { id: string; resolutionState: string; immediatePolicyAction: string; slaDeadlineAt: string } };
}

const viewWithdrawal = (r: ProofRevocation): Withdrawal['result'] => ({
  requestOnly: false,
  revocation: { id: r.id, resolutionState: r.resolutionState, immediatePolicyAction: r.immediatePolicyAction, slaDeadlineAt: r.slaDeadlineAt.toISOString() },
});

/**
 * Withdraw everywhere: the customer's own revocation, completed at once and final. Every grant is
 * revoked, the item is `revoked`, its public version cleared, open revocations completed with it and
 * pending reviews cancelled. A repeat answers the same revocation. Their workflows hear of it through
 * the workflow-command outbox, written in this transaction.
 */
export async function withdraw(ds: DataSource, person: ControlReach, itemId: string): Promise<Withdrawal> {
  return ds.transaction(async (em) => {
    const item = await personItem(em, person, itemId, true);
    const revocations = em.getRepository(ProofRevocation);
    if (item.status === 'revoked') {
      const done = await revocations.findOneOrFail({ where: { proofItemId: item.id, resolutionState: 'completed' }, order: { createdAt: 'DESC' } });
      return { result: viewWithdrawal(done) };
    }
    const now = await databaseNow(em);
    const open = await revocations.findBy({ proofItemId: item.id, resolutionState: In(['pending', 'escalated']) });
    let revocationId: string;
    if (open.length > 0) {
      revocationId = open[0].id;
      await revocations.update({ id: In(open.map((r) => r.id)) }, { resolutionState: 'completed', completedBy: 'customer', completedAt: now });
    } else {
      revocationId = newId('rev');
      await revocations.insert({
        id: revocationId, organizationId: item.organizationId, proofItemId: item.id, consentGrantId: null, requestText: null,
        resolutionState: 'completed', immediatePolicyAction: IMMEDIATE_POLICY_ACTION, slaDeadlineAt: now,
        requestedByType: 'customer', requestedById: null, completedBy: 'customer', completedAt: now,
      });
    }
    await em.getRepository(ProofItem).update(item.id, {
      status: 'revoked', statusReason: 'withdrawn_by_customer', revokedAt: now, approvedPublicVersionId: null, renderHold: true, updatedAt: now,
    });
    const grants = await em.getRepository(ConsentGrant).findBy({ proofItemId: item.id, state: 'active' });
    if (grants.length > 0) await em.getRepository(ConsentGrant).update({ id: In(grants.map((g) => g.id)) }, { state: 'revoked', revokedAt: now });
    const pending = await em.getRepository(ProofApprovalRequest).findBy({ proofItemId: item.id, state: 'pending' });
    for (const request of pending) {
      await em.getRepository(ProofApprovalRequest).update(request.id, { state: 'cancelled', decidedAt: now });
      await em.getRepository(ProofVersion).update(request.versionId, { approvalState: 'draft' });
    }
    const event = await appendProofEvent(em, {
      organizationId: item.organizationId, productId: item.productId, proofItemId: item.id, actor: CUSTOMER, eventType: 'proof.consent.revoked',
      properties: { revocationId, consentGrantId: null, consentGrantIds: grants.map((g) => g.id), byCustomer: true },
    });
    await announceDirectly(em, 'proof.revocation.completed', event);
    for (const r of open) await enqueueWorkflowCommand(em, { type: 'proof.revocation.completed', revocationId: r.id });
    for (const r of pending) {
      const ref: ApprovalRef = { requestId: r.id, proofItemId: r.proofItemId, versionId: r.versionId };
      await enqueueWorkflowCommand(em, { type: 'proof.approval.outcome', ref, outcome: 'cancelled' });
    }
    return { result: viewWithdrawal(await revocations.findOneByOrFail({ id: revocationId })) };
  });
}

const termsOfGrant = (g: ConsentGrant, over: Partial<ConsentTerms> = {}): ConsentTerms => ({
  displayMode: g.displayMode, identityFields: g.identityFields, channels: g.channels, products: g.products, media: g.media,
  paidUseAllowed: g.paidUseAllowed, translationAllowed: g.translationAllowed, geography: g.geography,
  validUntil: g.validUntil?.toISOString() ?? null, customerApprovedWording: g.customerApprovedWording, ...over,
});

/** A new grant on the active grant's terms (or narrower), superseding the others; with its receipt. */
async function regrant(
  ds: DataSource, em: EntityManager, item: ProofItem, version: ProofVersion, over: Partial<ConsentTerms>,
) {
  const active = (await grantsOf(em, item.id)).find((g) => g.state === 'active');
  if (!active) throw conflict('this story has no active consent to carry over');
  await em.getRepository(ConsentGrant).update({ proofItemId: item.id, state: 'active' }, { state: 'superseded' });
  const consentGrantId = await recordGrant(ds, em, {
    item, versionId: version.id, contentHash: version.contentHash, terms: termsOfGrant(active, over), actor: CUSTOMER,
    evidence: { capturedVia: 'control_link', at: (await databaseNow(em)).toISOString() },
    ...(active.consentTemplateVersionId && active.wordingHash
      ? { wording: { consentTemplateVersionId: active.consentTemplateVersionId, wordingHash: active.wordingHash } } : {}),
  });
  const [{ id: receiptId }] = await em.query(`SELECT id FROM proof_receipts WHERE consent_grant_id = $1`, [consentGrantId]);
  return { consentGrantId, receiptId, approvedVersionId: version.id };
}

export type ControlAction =
  | { action: 'approve_wording'; proofItemId: string; versionId: string; contentHash: string }
  | { action: 'decline_wording'; proofItemId: string; versionId: string; reason?: string }
  | { action: 'request_correction'; proofItemId: string; message: string; versionId?: string }
  | { action: 'pause' | 'resume'; proofItemId: string };

/** Every action but withdraw; a withdrawn story answers REVOKED_FINAL to all of them. */
export async function controlAction(ds: DataSource, person: ControlReach, body: ControlAction): Promise<{ status: 200 | 201; data: Record<string, unknown> }> {
  return ds.transaction(async (em) => {
    const item = await personItem(em, person, body.proofItemId, true);
    assertChangeable(item);
    const ledger = { organizationId: item.organizationId, productId: item.productId, proofItemId: item.id, actor: CUSTOMER };
    const versionOf = async (versionId: string) => {
      const version = await em.getRepository(ProofVersion).findOneBy({ id: versionId, proofItemId: item.id });
      if (!version) throw notFound('version');
      return version;
    };
    switch (body.action) {
      case 'approve_wording': {
        const version = await versionOf(body.versionId);
        if (version.contentHash !== body.contentHash) throw conflict('contentHash does not match this version: the wording changed');
        const granted = await regrant(ds, em, item, version, { customerApprovedWording: true });
        await em.query(`INSERT INTO collection_customer_decisions (id, proof_item_id, version_id, decision) VALUES ($1, $2, $3, 'approved')`,
          [newId('cdc'), item.id, version.id]);
        return { status: 201, data: granted };
      }
      case 'decline_wording': {
        const version = await versionOf(body.versionId);
        await em.query(`INSERT INTO collection_customer_decisions (id, proof_item_id, version_id, decision, reason) VALUES ($1, $2, $3, 'declined', $4)`,
          [newId('cdc'), item.id, version.id, body.reason ?? null]);
        await appendProofEvent(em, { ...ledger, eventType: 'proof.version.declined_by_customer', properties: { versionId: version.id } });
        return { status: 200, data: { proofItemId: item.id, versionId: version.id, decision: 'declined' } };
      }
      case 'request_correction': {
        if (body.versionId) await versionOf(body.versionId);
        const id = newId('cor');
        await em.query(
          `INSERT INTO proof_corrections (id, organization_id, product_id, proof_item_id, version_id, message, status) VALUES ($1, $2, $3, $4, $5, $6, 'open')`,
          [id, item.organizationId, item.productId, item.id, body.versionId ?? null, body.message]);
        await appendProofEvent(em, { ...ledger, eventType: 'proof.correction.requested', properties: { correctionId: id } });
        return { status: 201, data: { id, proofItemId: item.id, status: 'open', message: body.message, note: null, closedAt: null } };
      }
      case 'pause':
      case 'resume': {
        const paused = body.action === 'pause';
        await em.getRepository(ProofItem).update(item.id, { customerPausedAt: paused ? item.customerPausedAt ?? dbNow : null, updatedAt: dbNow });
        await appendProofEvent(em, { ...ledger, eventType: paused ? 'proof.item.paused_by_customer' : 'proof.item.resumed_by_customer' });
        return { status: 200, data: { proofItemId: item.id, paused } };
      }
    }
  });
}

/** Every use of the story and whether it renders now (the live evaluator in each placement's context). */
export async function passport(ds: DataSource, person: ControlReach, itemId: string) {
  const item = await personItem(ds.manager, person, itemId);
  const grants = await grantsOf(ds.manager, item.id);
  const currentId = item.approvedPublicVersionId ?? item.originalVersionId;
  const current = currentId ? await ds.getRepository(ProofVersion).findOneBy({ id: currentId }) : null;
  const placements: Array<{ placement_id: string }> = await ds.query(
    `SELECT DISTINCT placement_id FROM proof_placement_items WHERE proof_item_id = $1 AND state = 'active'`, [item.id]);
  const now = new Date();
  const uses = [];
  for (const { placement_id } of placements) {
    const loaded = await loadPlacement(ds.manager, placement_id);
    const entry = loaded?.entries.find((e) => e.proofItemId === item.id);
    if (!loaded || !entry) continue;
    const decision = decideEntry(loaded.placement, entry, now);
    const live = loaded.placement.state === 'active' && loaded.productActive;
    uses.push({
      placementId: loaded.placement.id, name: loaded.placement.name, placementType: loaded.placement.placementType,
      channel: loaded.placement.channel, placementState: loaded.placement.state, rendersNow: live && decision.eligible,
      reasons: [...(live ? [] : ['placement_not_active']), ...decision.reasons],
    });
  }
  const assets: Array<Record<string, any>> = await ds.query(
    `SELECT id, asset_type, approval_state, channel_eligibility FROM proof_assets WHERE $1 = ANY(source_proof_ids) ORDER BY created_at, id`, [item.id]);
  return {
    proofItemId: item.id,
    contentHash: item.status === 'revoked' ? null : current?.contentHash ?? null,
    consent: grants.length ? viewGrant(grants[0]) : null,
    uses,
    assets: assets.map((a) => ({ id: a.id, assetType: a.asset_type, approvalState: a.approval_state, channelEligibility: a.channel_eligibility })),
  };
}

export const PASSPORT_SCHEMA = 'service-proof-passport-v1';

/** The passport as a file, signed like receipts (Ed25519 over its canonical JSON). */
export async function signedPassport(ds: DataSource, person: ControlReach, itemId: string) {
  const body = await passport(ds, person, itemId);
  const key = await activeSigningKey(ds);
  const payload = { schema: PASSPORT_SCHEMA, canonicalization: CANONICALIZATION, issuedAt: new Date().toISOString(), ...body };
  return { passport: payload, signature: signCanonical(key, payload) };
}

export type PassportAction = { action: 'remove_use'; proofItemId: string; placementId: string }
  | { action: 'limit_channels'; proofItemId: string; channels: string[] };

export async function passportAction(ds: DataSource, person: ControlReach, body: PassportAction) {
  return ds.transaction(async (em) => {
    const item = await personItem(em, person, body.proofItemId, true);
    assertChangeable(item);
    if (body.action === 'remove_use') {
      const [rows]: [Array<{ id: string }>, number] = await em.query(
        `UPDATE proof_placement_items SET state = 'removed', removed_reason = 'removed_by_customer', removed_at = now()
          WHERE placement_id = $1 AND proof_item_id = $2 AND state = 'active' RETURNING id`, [body.placementId, item.id]);
      if (rows.length === 0) throw notFound('use');
      await em.getRepository(ProofPlacement).increment({ id: body.placementId }, 'renderCacheVersion', 1);
      await appendProofEvent(em, {
        organizationId: item.organizationId, productId: item.productId, proofItemId: item.id, placementId: body.placementId, actor: CUSTOMER,
        eventType: 'proof.placement.item_removed', properties: { placementItemId: rows[0].id, reason: 'removed_by_customer' },
      });
      return { status: 200 as const, data: { placementId: body.placementId, proofItemId: item.id, state: 'removed', removedReason: 'removed_by_customer' } };
    }
    const active = (await grantsOf(em, item.id)).find((g) => g.state === 'active');
    if (!active) throw conflict('this story has no active consent to narrow');
    const wider = body.channels.filter((c) => !active.channels.includes(c));
    if (wider.length) throw new ServiceError('INVALID_INPUT', `channels may only narrow the consent: ${wider.join(', ')} not granted`);
    const version = await em.getRepository(ProofVersion).findOneByOrFail({ id: active.approvedVersionId });
    return { status: 201 as const, data: await regrant(ds, em, item, version, { channels: body.channels }) };
  });
}

/** The newest grant's signed receipt of the story (or the named one of it). */
export async function customerReceipt(ds: DataSource, person: ControlReach, itemId: string, receiptId?: string) {
  const item = await personItem(ds.manager, person, itemId);
  const rows: Array<{ id: string }> = await ds.query(
    `SELECT r.id FROM proof_receipts r JOIN consent_grants g ON g.id = r.consent_grant_id
      WHERE r.proof_item_id = $1 ${receiptId ? 'AND r.id = $2' : ''} ORDER BY g.created_at DESC, g.id DESC LIMIT 1`,
    receiptId ? [item.id, receiptId] : [item.id]);
  if (!rows.length) throw notFound('receipt');
  const receipt = await readReceipt(ds, rows[0].id);
  if (!receipt) throw notFound('receipt');
  return receipt;
}
