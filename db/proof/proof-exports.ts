import { createHash } from 'node:crypto';
import { DataSource, EntityManager, In } from 'typeorm';
import { CANONICALIZATION, canonicalJson, sha256OfCanonical } from '../rules/canonical-json';
import { notFound } from '../../runtime/service-error';
import { ConsentGrant, Product, ProofItem, ProofPlacement, ProofVersion } from '../entities';
import { eligibleChannels, evaluateEligibility } from '../rules/proof-eligibility';
import { viewGrant, viewItem, viewVersion } from './proof-items';
import { consentStatus } from '../rules/proof-status';
import { viewPlacement } from './proof-placements';

export const EXPORT_FORMAT = 'service-proof-export-v1';
export const RAW_EXPORT_FORMAT = 'service-proof-raw-export-v1';

function withDigest(bundle: Record<string, unknown>) {
  return { bundle, digest: { algorithm: 'sha256', canonicalization: CANONICALIZATION, value: sha256OfCanonical(bundle) } };
}

async function grantsByItem(db: DataSource | EntityManager, items: ProofItem[]): Promise<Map<string, ConsentGrant[]>> {
  const grants = items.length ? await db.getRepository(ConsentGrant).find({
    where: { proofItemId: In(items.map((i) => i.id)) }, order: { createdAt: 'ASC', id: 'ASC' },
  }) : [];
  const byItem = new Map<string, ConsentGrant[]>(items.map((i) => [i.id, []]));
  for (const grant of grants) byItem.get(grant.proofItemId)!.push(grant);
  return byItem;
}

function consentsOf(items: ProofItem[], grants: Map<string, ConsentGrant[]>) {
  return items.map((item) => {
    const own = grants.get(item.id) ?? [];
    return { proofItemId: item.id, status: consentStatus(item, own), grants: own.map(viewGrant) };
  });
}

/** Items read a page at a time: a page's items, versions and grants are all the export holds at once. */
export const EXPORT_PAGE_SIZE = 500;

type Digest = { algorithm: 'sha256'; canonicalization: string; value: string };

/**
 * The approved-only export as text chunks of one JSON document `{"bundle":…,"digest":…}`, written in RFC 8785
 * canonical form as it is read, so the bundle's bytes in the document are exactly the bytes its digest hashes.
 *
 * The bundle holds the items whose approved public version the shared evaluator finds usable on at least one
 * channel now (consent active and unexpired, the customer's wording, not revoked, held or deleted), with only that
 * version, the consent summaries and the product's placements. Canonical order puts its members in key order
 * (consents, format, generatedAt, items, placements, productId, versions), so the candidates are read three times,
 * in keyset pages by (created_at, id), inside one REPEATABLE READ transaction with one `now`: every pass sees the
 * same rows and decides the same way, and consents[i], items[i] and versions[i] are of the same item. The first
 * chunk follows the first read, so a database that fails at once still answers an error rather than a cut body.
 */
export async function* approvedExportDocument(ds: DataSource, productId: string, pageSize = EXPORT_PAGE_SIZE): AsyncGenerator<string> {
  const runner = ds.createQueryRunner();
  await runner.connect();
  try {
    await runner.startTransaction('REPEATABLE READ');
    await runner.query('SET TRANSACTION READ ONLY');
    const em = runner.manager;
    const now = new Date();
    const hash = createHash('sha256');
    let pending = '{"bundle":';
    // Bundle text goes through the hash exactly as it is written.
    const bundle = (text: string) => { hash.update(text, 'utf8'); pending += text; };
    const flush = () => { const chunk = pending; pending = ''; return chunk; };

    const members: Array<[string, (page: EligiblePage) => Promise<unknown[]>]> = [
      ['consents', async ({ items, grants }) => consentsOf(items, grants)],
      ['items', async ({ items }) => items.map(viewItem)],
      ['versions', async ({ items }) => (await publicVersionsOf(em, items)).map(viewVersion)],
    ];
    bundle('{');
    for (const [name, view] of members) {
      if (name === 'items') {
        bundle(`"format":${canonicalJson(EXPORT_FORMAT)},"generatedAt":${canonicalJson(now.toISOString())},`);
      }
      if (name === 'versions') {
        const placements = await em.getRepository(ProofPlacement).find({ where: { productId }, order: { createdAt: 'ASC', id: 'ASC' } });
        bundle(`"placements":${canonicalArray(placements.map(viewPlacement))},"productId":${canonicalJson(productId)},`);
      }
      bundle(`${canonicalJson(name)}:[`);
      let first = true;
      for await (const page of eligiblePages(em, productId, now, pageSize)) {
        const text = (await view(page)).map(canonicalJson).join(',');
        if (text) bundle(first ? text : `,${text}`);
        first &&= !text;
        yield flush();
      }
      bundle(name === 'versions' ? ']' : '],');
    }
    bundle('}');
    const digest: Digest = { algorithm: 'sha256', canonicalization: CANONICALIZATION, value: hash.digest('hex') };
    pending += `,"digest":${canonicalJson(digest)}}`;
    yield flush();
    await runner.commitTransaction();
  } finally {
    if (runner.isTransactionActive) await runner.rollbackTransaction().catch(() => undefined);
    await runner.release();
  }
}

interface EligiblePage {
  items: ProofItem[];
  grants: Map<string, ConsentGrant[]>;
}

/** The candidates in keyset pages by (created_at, id), each page cut to the items eligible at `now`. */
async function* eligiblePages(em: EntityManager, productId: string, now: Date, pageSize: number): AsyncGenerator<EligiblePage> {
  let after: ProofItem | null = null;
  for (;;) {
    const query = em.getRepository(ProofItem).createQueryBuilder('i')
      .where('i.product_id = :productId', { productId })
      .andWhere(`i.status = 'approved' AND i.approved_public_version_id IS NOT NULL AND NOT i.render_hold`);
    if (after) query.andWhere('(i.created_at, i.id) > (:createdAt, :id)', { createdAt: after.createdAt, id: after.id });
    const candidates = await query.orderBy('i.created_at', 'ASC').addOrderBy('i.id', 'ASC').limit(pageSize).getMany();
    if (candidates.length === 0) return;
    const grants = await grantsByItem(em, candidates);
    const items = candidates.filter((item) => eligibleChannels(evaluateEligibility(item, grants.get(item.id) ?? [], now)).length > 0);
    yield { items, grants };
    if (candidates.length < pageSize) return;
    after = candidates[candidates.length - 1];
  }
}

/** Each item's approved public version, in the items' order. */
async function publicVersionsOf(em: EntityManager, items: ProofItem[]): Promise<ProofVersion[]> {
  if (items.length === 0) return [];
  const byId = new Map((await em.getRepository(ProofVersion).findBy({ id: In(items.map((i) => i.approvedPublicVersionId!)) })).map((v) => [v.id, v]));
  return items.map((i) => byId.get(i.approvedPublicVersionId!)!);
}

function canonicalArray(values: unknown[]): string {
  return `[${values.map(canonicalJson).join(',')}]`;
}

/** The owner's raw export: every live item's immutable original, whatever its approval. Never revoked ones. */
export async function exportRaw(ds: DataSource, organizationId: string, productId: string) {
  if (!(await ds.getRepository(Product).existsBy({ id: productId, organizationId }))) throw notFound('product');
  const items = await ds.getRepository(ProofItem).createQueryBuilder('i')
    .where('i.organization_id = :organizationId AND i.product_id = :productId', { organizationId, productId })
    .andWhere(`i.status NOT IN ('revoked', 'deleted')`)
    .orderBy('i.created_at', 'ASC').addOrderBy('i.id', 'ASC')
    .getMany();
  const originals = items.length ? await ds.getRepository(ProofVersion).find({
    where: { proofItemId: In(items.map((i) => i.id)), isOriginal: true }, order: { proofItemId: 'ASC' },
  }) : [];
  return withDigest({
    format: RAW_EXPORT_FORMAT,
    productId,
    generatedAt: new Date().toISOString(),
    items: items.map(viewItem),
    originals: originals.map(viewVersion),
    consents: consentsOf(items, await grantsByItem(ds, items)),
  });
}
