import { EntityManager } from 'typeorm';
import { servedWelcomeVideoMediaId } from './media';
import { ServiceError, conflict, notFound } from '../../runtime/service-error';

/**
 * What a draft is pinned to, read from the collection-setup tables (flows, their immutable versions,
 * consent template versions and question versions): the one interface the customer side needs.
 */
export interface PinnedQuestion {
  questionId: string;
  version: number;
  required: boolean;
  text: string;
  kind: 'short_text' | 'long_text' | 'choice' | 'yes_no';
  helpText: string | null;
  options: string[] | null;
}

export interface TemplateTerms {
  displayModes: string[];
  identityFields: string[];
  channels: string[];
  media: string[];
  paidUseAllowed: boolean;
  translationAllowed: boolean;
  geography: string[];
  validityDays: number | null;
}

export interface PinnedFlow {
  flowId: string;
  publicId: string;
  flowState: string;
  flowVersionId: string;
  versionNumber: number;
  organizationId: string;
  productId: string;
  title: string;
  intro: string;
  thankYou: string;
  mediaKinds: string[];
  identityFields: string[];
  allowedOrigins: string[];
  maxVideoSeconds: number;
  rating: { scale: 'nps' | 'five_star'; required: boolean } | null;
  routing: Record<string, string>;
  incentive: { offered: boolean; description?: string; [k: string]: unknown };
  questions: PinnedQuestion[];
  consent: { consentTemplateVersionId: string; wording: string; wordingHash: string; terms: TemplateTerms } | null;
  /** The version's welcome video, only while `GET /welcome/{videoId}` serves it (so a page never shows a dead video). */
  welcomeVideoId: string | null;
}

interface VersionRow {
  flow_id: string; public_id: string; flow_state: string; id: string; version_number: number; organization_id: string;
  product_id: string; definition: Record<string, any>; incentive: PinnedFlow['incentive'];
}

async function pin(em: EntityManager, row: VersionRow): Promise<PinnedFlow> {
  const d = row.definition;
  const refs: Array<{ questionId: string; version: number; required: boolean }> = d.questions ?? [];
  const questions: PinnedQuestion[] = [];
  if (refs.length > 0) {
    const rows: Array<Record<string, any>> = await em.query(
      `SELECT question_id, version, text, kind, help_text, options FROM collection_question_versions
        WHERE (question_id, version) IN (SELECT * FROM unnest($1::text[], $2::int[]))`,
      [refs.map((r) => r.questionId), refs.map((r) => r.version)]);
    const byRef = new Map(rows.map((r) => [`${r.question_id}@${r.version}`, r]));
    for (const ref of refs) {
      const q = byRef.get(`${ref.questionId}@${ref.version}`);
      if (!q) continue;
      questions.push({
        questionId: ref.questionId, version: ref.version, required: ref.required, text: q.text, kind: q.kind,
        helpText: q.help_text ?? null, options: q.options ?? null,
      });
    }
  }
  let consent: PinnedFlow['consent'] = null;
  if (d.consentTemplateVersionId) {
    const rows: Array<Record<string, any>> = await em.query(
      `SELECT id, wording, wording_hash, terms FROM consent_template_versions WHERE id = $1 AND product_id = $2`,
      [d.consentTemplateVersionId, row.product_id]);
    if (rows.length) consent = { consentTemplateVersionId: rows[0].id, wording: rows[0].wording, wordingHash: rows[0].wording_hash, terms: rows[0].terms };
  }
  let welcomeVideoId: string | null = null;
  if (typeof d.welcomeVideoId === 'string') {
    if (await servedWelcomeVideoMediaId(em, d.welcomeVideoId)) welcomeVideoId = d.welcomeVideoId;
  }
  return {
    flowId: row.flow_id, publicId: row.public_id, flowState: row.flow_state, flowVersionId: row.id, versionNumber: row.version_number,
    organizationId: row.organization_id, productId: row.product_id, title: d.title ?? '', intro: d.intro ?? '',
    thankYou: d.thankYou ?? '', mediaKinds: d.mediaKinds ?? ['text'], identityFields: d.identityFields ?? [],
    allowedOrigins: d.allowedOrigins ?? [], maxVideoSeconds: d.maxVideoSeconds ?? 120, rating: d.rating ?? null,
    routing: d.routing ?? {}, incentive: row.incentive ?? { offered: false }, questions, consent, welcomeVideoId,
  };
}

const VERSION_SELECT = `SELECT f.id AS flow_id, f.public_id, f.state AS flow_state, v.id, v.version_number, v.organization_id,
  v.product_id, v.definition, v.incentive FROM collection_flow_versions v JOIN collection_flows f ON f.id = v.flow_id`;

export async function pinnedFlow(em: EntityManager, flowVersionId: string): Promise<PinnedFlow> {
  const rows: VersionRow[] = await em.query(`${VERSION_SELECT} WHERE v.id = $1`, [flowVersionId]);
  if (!rows.length) throw notFound('flow version');
  return pin(em, rows[0]);
}

/** The live link: a live flow by its public id, at its latest published version. Paused or archived is 409. */
export async function liveFlow(em: EntityManager, publicId: string, productId?: string): Promise<PinnedFlow> {
  const rows: VersionRow[] = await em.query(
    `${VERSION_SELECT} WHERE (f.public_id = $1 OR f.id = $1) ${productId ? 'AND f.product_id = $2' : ''}
      ORDER BY v.version_number DESC LIMIT 1`, productId ? [publicId, productId] : [publicId]);
  if (!rows.length) {
    const exists: unknown[] = await em.query(`SELECT 1 FROM collection_flows WHERE (public_id = $1 OR id = $1) ${productId ? 'AND product_id = $2' : ''}`,
      productId ? [publicId, productId] : [publicId]);
    if (exists.length) throw conflict('this flow is not live');
    throw notFound('flow');
  }
  if (rows[0].flow_state !== 'live') throw conflict('this flow is not live');
  return pin(em, rows[0]);
}

/** What a customer sees of the pinned version: questions, consent wording and hash, rating, media kinds. */
export function publicFlow(f: PinnedFlow) {
  return {
    id: f.publicId,
    flowVersionId: f.flowVersionId,
    versionNumber: f.versionNumber,
    title: f.title,
    intro: f.intro,
    thankYou: f.thankYou,
    questions: f.questions,
    rating: f.rating,
    mediaKinds: f.mediaKinds,
    identityFields: f.identityFields,
    maxVideoSeconds: f.maxVideoSeconds,
    consentTemplateVersionId: f.consent?.consentTemplateVersionId ?? null,
    wording: f.consent?.wording ?? null,
    wordingHash: f.consent?.wordingHash ?? null,
    terms: f.consent?.terms ?? null,
    incentive: f.incentive.offered ? { offered: true, description: f.incentive.description ?? null } : { offered: false },
    welcomeVideo: f.welcomeVideoId ? { id: f.welcomeVideoId, url: `/api/proof/collect/welcome/${f.welcomeVideoId}` } : null,
  };
}

/** Bands of each scale (docs/collection.md#routing-corrections-approval-links); the flow version's routing names each band's follow-up. */
const BANDS = {
  nps: [['detractor', 0, 6, 'support_room'], ['passive', 7, 8, 'check_in'], ['promoter', 9, 10, 'story_invite']],
  five_star: [['negative', 1, 2, 'support_room'], ['neutral', 3, 3, 'check_in'], ['positive', 4, 5, 'story_invite']],
} as const;

export function routeOf(f: PinnedFlow, score: number): { scale: string; band: string; followUp: string } | null {
  if (!f.rating) return null;
  const band = BANDS[f.rating.scale].find(([, min, max]) => score >= min && score <= max);
  if (!band) return null;
  return { scale: f.rating.scale, band: band[0], followUp: f.routing[band[0]] ?? band[3] };
}

export const optedOut = () => new ServiceError('OPTED_OUT', 'this recipient asked not to be asked again');
