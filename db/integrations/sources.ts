import { DataSource, EntityManager } from 'typeorm';
import { ProofSource } from '../entities';
import { Page, PageRequest, decodeCursor, encodeCursor } from '../pagination';
import type { Actor } from '../proof/proof-ledger';
import { newId } from '../rules/ids';
import { sha256Hex } from '../rules/secrets';
import { notFound } from '../../runtime/service-error';
import { databaseNow } from '../clock';

export const SOURCE_SYSTEMS = ['proof_submission', 'proof_import', 'signal', 'value_event', 'payment', 'crm', 'brand_mention'] as const;
export const SOURCE_KINDS = ['testimonial', 'review', 'survey_answer', 'signal', 'ticket', 'mention', 'payment', 'deal'] as const;
export type SourceReuse = 'allowed_with_consent' | 'internal_only' | 'blocked';

export interface SourceLinks {
  proofItemId?: string | null;
  versionId?: string | null;
  signalId?: string | null;
  valueEventId?: string | null;
  dealId?: string | null;
  brandMentionId?: string | null;
}

export interface NewSource {
  organizationId: string;
  productId: string;
  system: (typeof SOURCE_SYSTEMS)[number];
  externalId: string;
  url?: string | null;
  kind: (typeof SOURCE_KINDS)[number];
  capturedAt: Date;
  capturedText?: string | null;
  title?: string | null;
  attribution?: Record<string, unknown> | null;
  links: SourceLinks;
  reuse: SourceReuse;
  reasons?: string[];
  actor: Actor;
  ref?: string | null;
}

/** `at` is the writing transaction's database clock (databaseNow). */
function step(at: Date, name: string, actor: Actor, ref: string | null, text: string | null | undefined) {
  return { step: name, at: at.toISOString(), actor, ref, contentHash: text ? `sha256:${sha256Hex(text)}` : null };
}

const LINK_KEYS = ['proofItemId', 'versionId', 'signalId', 'valueEventId', 'dealId', 'brandMentionId'] as const;

/**
 * Writes the source record of something an origin stored, in the caller's transaction, with its
 * first provenance steps; the same origin again only appends `stepName`.
 */
export async function recordSource(em: EntityManager, s: NewSource, stepName: 'captured' | 'imported' = 'captured'): Promise<string> {
  const links = Object.fromEntries(LINK_KEYS.map((k) => [k, s.links[k] ?? null]));
  const at = await databaseNow(em);
  const first = [step(at, stepName, s.actor, s.ref ?? null, s.capturedText), step(at, 'stored', s.actor, s.ref ?? null, s.capturedText)];
  const [row] = await em.query(
    `INSERT INTO proof_sources (id, organization_id, product_id, system, external_id, url, kind, captured_at, captured_text, title,
       attribution, links, provenance, reuse, reasons, proof_item_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)
     ON CONFLICT (product_id, system, external_id) DO UPDATE SET provenance = proof_sources.provenance || $17::jsonb
     RETURNING id`,
    [newId('src'), s.organizationId, s.productId, s.system, s.externalId, s.url ?? null, s.kind, s.capturedAt, s.capturedText ?? null,
      s.title ?? null, s.attribution ? JSON.stringify(s.attribution) : null, JSON.stringify(links), JSON.stringify(first), s.reuse,
      s.reasons ?? [], s.links.proofItemId ?? null, JSON.stringify([step(at, stepName, s.actor, s.ref ?? null, s.capturedText)])],
  );
  return row.id;
}
/** Links an existing source to the item made from it (an import), appending the step. */
export async function linkSourceToItem(em: EntityManager, sourceId: string, proofItemId: string, versionId: string, actor: Actor): Promise<void> {
  await em.query(
    `UPDATE proof_sources SET proof_item_id = $2, links = links || jsonb_build_object('proofItemId', $2::text, 'versionId', $3::text),
       provenance = provenance || $4::jsonb WHERE id = $1`,
    [sourceId, proofItemId, versionId, JSON.stringify([step(await databaseNow(em), 'imported', actor, proofItemId, null)])],
  );
}

type SourceRow = ProofSource & { itemStatus?: string | null; itemPublic?: boolean | null };

/** Item states whose words a source no longer serves (a deleted item's are erased once its window closes). */
const GONE_STATES = ['revoked', 'deleted'];

/**
 * A source of a revoked or deleted item answers without the customer's words: no text, title or
 * attribution (docs/integrations.md#rules-as-built: "revoked or erased → null, policy blocked"); ids, provenance (content
 * hashes) and the policy stay, so what happened to it can still be read.
 */
function viewSource(row: SourceRow, canReadPrivate: boolean) {
  const gone = GONE_STATES.includes(row.itemStatus ?? '');
  const approvedPublic = row.itemStatus === 'approved' && row.itemPublic === true;
  const withheld = !gone && row.capturedText !== null && !approvedPublic && !canReadPrivate;
  return {
    id: row.id,
    productId: row.productId,
    origin: { system: row.system, externalId: row.externalId, url: row.url },
    kind: row.kind,
    capturedAt: row.capturedAt.toISOString(),
    capturedText: gone || withheld ? null : row.capturedText,
    capturedTextWithheld: withheld,
    title: gone ? null : row.title,
    attribution: gone ? null : row.attribution ?? null,
    links: row.links,
    provenance: row.provenance,
    policy: gone
      ? { reuse: 'blocked' as const, reasons: [...new Set([...row.reasons, row.itemStatus === 'revoked' ? 'revoked' : 'erased'])] }
      : { reuse: row.reuse, reasons: row.reasons },
    createdAt: row.createdAt.toISOString(),
  };
}
export type SourceView = ReturnType<typeof viewSource>;

export interface SourceFilter {
  q?: string;
  system?: string[];
  kind?: string[];
  externalId?: string;
  proofItemId?: string;
  since?: Date;
  until?: Date;
}

/**
 * The linked item's state is read per source through its primary key, never joined: a join lets the planner
 * read all of a product's items to hash them when a search expects many matches.
 */
const itemStatus = (alias: string) => `(SELECT ${alias}.status FROM proof_items ${alias} WHERE ${alias}.id = s.proof_item_id)`;
const itemServesText = `coalesce((SELECT a.status = 'approved' AND a.approved_public_version_id IS NOT NULL FROM proof_items a
  WHERE a.id = s.proof_item_id), false)`;

function sourceQuery(ds: DataSource, productId: string) {
  return ds.getRepository(ProofSource).createQueryBuilder('s')
    .addSelect(itemStatus('i'), 'item_status')
    .addSelect(`(SELECT p.approved_public_version_id IS NOT NULL FROM proof_items p WHERE p.id = s.proof_item_id)`, 'item_public')
    .where('s.product_id = :productId', { productId });
}

async function withItemState(qb: ReturnType<typeof sourceQuery>, limit: number): Promise<SourceRow[]> {
  const { entities, raw } = await qb.limit(limit).getRawAndEntities();
  return entities.map((e, i) => Object.assign(e, { itemStatus: raw[i].item_status, itemPublic: raw[i].item_public }));
}

/** Newest first. Without proof:read_private, `q` searches only titles and approved public text. */
export async function listSources(
  ds: DataSource, productId: string, filter: SourceFilter, page: PageRequest, canReadPrivate: boolean,
): Promise<Page<SourceView>> {
  const qb = sourceQuery(ds, productId);
  if (filter.system?.length) qb.andWhere('s.system IN (:...systems)', { systems: filter.system });
  if (filter.kind?.length) qb.andWhere('s.kind IN (:...kinds)', { kinds: filter.kind });
  if (filter.externalId) qb.andWhere('s.external_id = :externalId', { externalId: filter.externalId });
  if (filter.proofItemId) qb.andWhere('s.proof_item_id = :proofItemId', { proofItemId: filter.proofItemId });
  if (filter.since) qb.andWhere('s.captured_at >= :since', { since: filter.since });
  if (filter.until) qb.andWhere('s.captured_at < :until', { until: filter.until });
  const words = (filter.q ?? '').split(/\s+/).filter(Boolean);
  // Words that are not served are not searched either: a match would tell them.
  if (words.length) qb.andWhere(`coalesce(${itemStatus('g')}, '') NOT IN (:...gone)`, { gone: GONE_STATES });
  // Both sides match the expressions of the trigram indexes (migration ScaleReadIndexes), so a word few sources
  // hold is found through them; the text's side names the item's state beside it, not inside it, for the same reason.
  const served = canReadPrivate ? '' : ` AND ${itemServesText}`;
  words.forEach((word, n) => {
    qb.andWhere(`((coalesce(s.captured_text, '') ILIKE :w${n}${served}) OR coalesce(s.title, '') ILIKE :w${n})`, {
      [`w${n}`]: `%${word.replace(/[\\%_]/g, (c) => `\\${c}`)}%`,
    });
  });
  // The same keyset paging as db/pagination's pageOf, with the linked item's state read alongside.
  if (page.cursor) {
    const after = decodeCursor(page.cursor);
    qb.andWhere('(s.created_at, s.id) < (:cursorTime, :cursorId)', { cursorTime: after.createdAt, cursorId: after.id });
  }
  qb.orderBy('s.created_at', 'DESC').addOrderBy('s.id', 'DESC');
  const rows = await withItemState(qb, page.limit + 1);
  const more = rows.length > page.limit;
  const data = more ? rows.slice(0, page.limit) : rows;
  return { data: data.map((r) => viewSource(r, canReadPrivate)), nextCursor: more ? encodeCursor(data[data.length - 1]) : null };
}

export async function getSource(ds: DataSource, productId: string, id: string, canReadPrivate: boolean): Promise<SourceView> {
  const [row] = await withItemState(sourceQuery(ds, productId).andWhere('s.id = :id', { id }), 1);
  if (!row) throw notFound('source');
  return viewSource(row, canReadPrivate);
}
