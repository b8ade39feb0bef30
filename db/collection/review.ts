import { DataSource } from 'typeorm';
import { conflict, notFound } from '../../runtime/service-error';
import { ProofAsset, ProofItem } from '../entities';
import { sha256OfCanonical } from '../rules/canonical-json';
import { Actor, appendProofEvent } from '../proof/proof-ledger';
import { ControlReach, controlAction, controlView } from './control';

const CUSTOMER: Actor = { type: 'customer', id: null };

type Approval = { proofItemId: string; state: string };
type AssetContent = Record<string, unknown> & { customerApprovals?: Approval[] };

/** An asset's hash as the customer sees it: over its content without `customerApprovals` (RFC 8785 canonical JSON). */
export function assetContentHash(content: AssetContent): string {
  const { customerApprovals: _approvals, ...rest } = content;
  return `sha256:${sha256OfCanonical(rest)}`;
}

type Statement = { citations?: Array<{ sourceVersionId?: string }> };
type Section = { statements?: Statement[] };

/**
 * What of an asset one quoted customer reviews: without `customerApprovals`, and of a case study's sections
 * only the statements citing this customer's versions alone. A case study quoting several customers
 * shows each of them their own quotes, never another customer's words (a statement citing two customers
 * is for neither alone). `contentHash` stays the whole asset's, so a change anywhere asks again.
 */
function shownTo(content: AssetContent, ownVersionIds: string[]): Record<string, unknown> {
  const { customerApprovals: _approvals, ...rest } = content;
  if (!Array.isArray(rest.sections)) return rest;
  const own = (s: Statement) => (s.citations ?? []).length > 0 && s.citations!.every((c) => ownVersionIds.includes(c.sourceVersionId ?? ''));
  const sections = (rest.sections as Section[]).flatMap((section) => {
    const statements = (section.statements ?? []).filter(own);
    return statements.length > 0 ? [{ ...section, statements }] : [];
  });
  return { ...rest, sections };
}

/** The live stories the link reaches (a story link: its own one at most). */
async function personItemIds(ds: DataSource, person: ControlReach): Promise<string[]> {
  const rows: Array<{ id: string }> = await ds.query(
    `SELECT id FROM proof_items WHERE organization_id = $1 AND product_id = $2 AND customer_person_id = $3 AND status NOT IN ('deleted', 'revoked')
        AND ($4::text IS NULL OR id = $4)`,
    [person.organizationId, person.productId, person.personRef, person.proofItemId]);
  return rows.map((r) => r.id);
}

/** What awaits the customer: new wordings of their stories and generated assets quoting them. */
export async function reviewQueue(ds: DataSource, person: ControlReach) {
  const { stories } = await controlView(ds, person);
  const versions = stories.flatMap((s) => s.pendingApprovals.map((p) => ({
    kind: 'version' as const, id: p.versionId, proofItemId: s.proofItemId, content: p.content, contentHash: p.contentHash, semanticDiff: p.semanticDiff,
  })));
  const ids = await personItemIds(ds, person);
  const assets = ids.length === 0 ? [] : await ds.getRepository(ProofAsset).createQueryBuilder('a')
    .where('a.source_proof_ids && :ids', { ids }).andWhere('a.product_id = :p', { p: person.productId }).getMany();
  return {
    versions,
    assets: assets.flatMap((a) => {
      const content = a.content as AssetContent;
      const mine = (content.customerApprovals ?? []).filter((c) => ids.includes(c.proofItemId) && c.state === 'pending');
      if (mine.length === 0) return [];
      const ownVersionIds = a.sourceVersionIds.filter((_v, i) => ids.includes(a.sourceProofIds[i]));
      return [{
        kind: 'asset' as const, id: a.id, assetType: a.assetType, proofItemIds: mine.map((m) => m.proofItemId),
        content: shownTo(content, ownVersionIds), contentHash: assetContentHash(content),
      }];
    }),
  };
}

export interface ReviewDecision { kind: 'version' | 'asset'; id: string; decision: 'approve' | 'decline'; contentHash: string }

/** The customer approves or declines exact words: a version (as approve_wording) or an asset quoting them. */
export async function decideReview(ds: DataSource, person: ControlReach, body: ReviewDecision) {
  if (body.kind === 'version') {
    const [row]: Array<{ proof_item_id: string; content_hash: string }> = await ds.query(
      `SELECT v.proof_item_id, v.content_hash FROM proof_versions v JOIN proof_items i ON i.id = v.proof_item_id
        WHERE v.id = $1 AND i.organization_id = $2 AND i.product_id = $3 AND i.customer_person_id = $4 AND ($5::text IS NULL OR i.id = $5)`,
      [body.id, person.organizationId, person.productId, person.personRef, person.proofItemId]);
    if (!row) throw notFound('version');
    if (row.content_hash !== body.contentHash) throw conflict('contentHash does not match: the words changed');
    const action = body.decision === 'approve'
      ? { action: 'approve_wording' as const, proofItemId: row.proof_item_id, versionId: body.id, contentHash: body.contentHash }
      : { action: 'decline_wording' as const, proofItemId: row.proof_item_id, versionId: body.id };
    return controlAction(ds, person, action);
  }
  const ids = await personItemIds(ds, person);
  return ds.transaction(async (em) => {
    const asset = await em.getRepository(ProofAsset).findOne({ where: { id: body.id, productId: person.productId }, lock: { mode: 'pessimistic_write' } });
    const content = asset?.content as AssetContent | undefined;
    const mine = (content?.customerApprovals ?? []).filter((c) => ids.includes(c.proofItemId));
    if (!asset || !content || mine.length === 0) throw notFound('asset');
    if (assetContentHash(content) !== body.contentHash) throw conflict('contentHash does not match: the asset changed');
    const state = body.decision === 'approve' ? 'approved' : 'declined';
    const customerApprovals = content.customerApprovals!.map((c) => (ids.includes(c.proofItemId) ? { ...c, state } : c));
    await em.getRepository(ProofAsset).update(asset.id, { content: { ...content, customerApprovals } });
    const item = await em.getRepository(ProofItem).findOneByOrFail({ id: mine[0].proofItemId });
    await appendProofEvent(em, {
      organizationId: item.organizationId, productId: item.productId, proofItemId: item.id, assetId: asset.id, actor: CUSTOMER,
      eventType: `proof.asset.${state}_by_customer`, properties: { assetType: asset.assetType },
    });
    // The customer's own entries only: who else the asset quotes is not theirs to know.
    return { status: 200 as const, data: { kind: 'asset', id: asset.id, decision: state,
      customerApprovals: customerApprovals.filter((c) => ids.includes(c.proofItemId)) } };
  });
}
