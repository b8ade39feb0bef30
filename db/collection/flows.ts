import { DataSource, EntityManager, In } from 'typeorm';
import { ServiceError, conflict, notFound, validationFailed } from '../../runtime/service-error';
import { CollectionFlow, CollectionFlowVersion, CollectionWelcomeVideo, ConsentTemplateVersion } from '../entities';
import { FlowState } from '../entities/collection-flow';
import { newId } from '../rules/ids';
import {
  DefinitionIssue, FlowDefinition, Incentive, completeDefinition, flowContentHash, routingIssues,
} from '../rules/collection-flow';
import { pinnedVersions } from './questions';
import { PageRequest } from '../pagination';
import { Teammate, assertOwnProduct, pageRows } from './scope';
import { dbNow } from '../clock';

export interface FlowSettings { collectPageUrl: string; monthlyAllowance: number }

export const liveUrlOf = (collectPageUrl: string, publicId: string) => `${collectPageUrl}/f/${publicId}`;

export function viewFlowVersion(v: CollectionFlowVersion) {
  return {
    id: v.id,
    flowId: v.flowId,
    versionNumber: v.versionNumber,
    definition: v.definition,
    incentive: v.incentive,
    contentHash: v.contentHash,
    publishedAt: v.publishedAt.toISOString(),
  };
}

/** Proof items of the product this UTC month against the allowance (which flags, never refuses). */
async function allowanceOf(em: EntityManager, productIds: string[], limit: number) {
  const month = new Date().toISOString().slice(0, 7);
  if (productIds.length === 0) return new Map<string, { month: string; used: number; limit: number }>();
  const rows: Array<{ product_id: string; n: number }> = await em.query(
    `SELECT product_id, count(*)::int AS n FROM proof_items
      WHERE product_id = ANY($1) AND created_at >= date_trunc('month', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'
      GROUP BY product_id`,
    [productIds],
  );
  const used = new Map(rows.map((r) => [r.product_id, r.n]));
  return new Map(productIds.map((id) => [id, { month, used: used.get(id) ?? 0, limit }]));
}

async function flowViews(em: EntityManager, flows: CollectionFlow[], settings: FlowSettings) {
  const liveIds = flows.map((f) => f.liveVersionId).filter((id): id is string => id !== null);
  const live = liveIds.length ? await em.getRepository(CollectionFlowVersion).findBy({ id: In(liveIds) }) : [];
  const liveById = new Map(live.map((v) => [v.id, v]));
  const templateIds = flows.map((f) => (f.liveVersionId ? liveById.get(f.liveVersionId)!.definition : f.draftDefinition).consentTemplateVersionId)
    .filter((id): id is string => Boolean(id));
  const templates = templateIds.length ? await em.getRepository(ConsentTemplateVersion).findBy({ id: In(templateIds) }) : [];
  const templateById = new Map(templates.map((t) => [t.id, t]));
  const allowance = await allowanceOf(em, [...new Set(flows.map((f) => f.productId))], settings.monthlyAllowance);
  return flows.map((f) => {
    const definition = f.liveVersionId ? liveById.get(f.liveVersionId)!.definition : f.draftDefinition;
    const t = definition.consentTemplateVersionId ? templateById.get(definition.consentTemplateVersionId) : undefined;
    return {
      id: f.id,
      publicId: f.publicId,
      productId: f.productId,
      name: f.name,
      state: f.state,
      liveVersionId: f.liveVersionId,
      draftRevision: f.draftRevision,
      liveUrl: liveUrlOf(settings.collectPageUrl, f.publicId),
      consentTemplate: t ? { id: t.id, templateId: t.templateId, name: t.name, version: t.version, wordingHash: t.wordingHash } : null,
      allowance: allowance.get(f.productId)!,
      createdAt: f.createdAt.toISOString(),
      updatedAt: f.updatedAt.toISOString(),
    };
  });
}

export async function findFlow(em: EntityManager, organizationId: string, id: string, lock = false): Promise<CollectionFlow> {
  const flow = await em.getRepository(CollectionFlow).findOne({
    where: { id, organizationId }, ...(lock ? { lock: { mode: 'pessimistic_write' as const } } : {}),
  });
  if (!flow) throw notFound('flow');
  return flow;
}

export async function listFlows(ds: DataSource, organizationId: string, settings: FlowSettings, query: PageRequest & { productId?: string }) {
  const page = await pageRows(ds, CollectionFlow, organizationId, { product_id: query.productId }, query);
  return { data: await flowViews(ds.manager, page.data, settings), nextCursor: page.nextCursor };
}

export async function createFlow(
  ds: DataSource, who: Teammate, body: { productId: string; name: string; definition?: Partial<FlowDefinition> }, settings: FlowSettings,
) {
  return ds.transaction(async (em) => {
    await assertOwnProduct(em, who.organizationId, body.productId);
    const flowId = newId('flw');
    await em.getRepository(CollectionFlow).insert({
      id: flowId,
      publicId: newId('fp'),
      organizationId: who.organizationId,
      productId: body.productId,
      name: body.name,
      state: 'draft',
      draftDefinition: completeDefinition(body.name, body.definition),
      draftRevision: 1,
      liveVersionId: null,
      incentive: { offered: false },
      updatedAt: dbNow,
    });
    return getFlowIn(em, who.organizationId, flowId, settings);
  });
}

async function getFlowIn(em: EntityManager, organizationId: string, id: string, settings: FlowSettings, versionNumber?: number) {
  const flow = await findFlow(em, organizationId, id);
  const [view] = await flowViews(em, [flow], settings);
  const versions = await em.getRepository(CollectionFlowVersion).find({ where: { flowId: id }, order: { versionNumber: 'ASC' } });
  let version = null;
  if (versionNumber !== undefined) {
    const found = versions.find((v) => v.versionNumber === versionNumber);
    if (!found) throw notFound('flow version');
    version = viewFlowVersion(found);
  }
  return {
    ...view,
    definition: flow.draftDefinition,
    incentive: flow.incentive,
    versions: versions.map((v) => ({ id: v.id, versionNumber: v.versionNumber, contentHash: v.contentHash, publishedAt: v.publishedAt.toISOString() })),
    version,
  };
}

export async function getFlow(ds: DataSource, organizationId: string, id: string, settings: FlowSettings, versionNumber?: number) {
  return getFlowIn(ds.manager, organizationId, id, settings, versionNumber);
}

const staleRevision = (current: number) =>
  new ServiceError('CONFLICT', `the draft changed since revision you read; it is now ${current}`, { draftRevision: current });

export interface FlowPatch {
  draftRevision: number;
  name?: string;
  definition?: Partial<FlowDefinition>;
  state?: Exclude<FlowState, 'draft'>;
}

/**
 * Saves the draft definition (merged over the current one) or moves the state. A stale
 * `draftRevision` is 409; going live or pausing needs a published version; archived is final.
 */
export async function saveFlow(ds: DataSource, organizationId: string, id: string, patch: FlowPatch, settings: FlowSettings) {
  return ds.transaction(async (em) => {
    const flow = await findFlow(em, organizationId, id, true);
    if (flow.draftRevision !== patch.draftRevision) throw staleRevision(flow.draftRevision);
    if (flow.state === 'archived') throw conflict('the flow is archived');
    const changes: Partial<Omit<CollectionFlow, 'updatedAt'>> = {};
    if (patch.state && patch.state !== 'archived' && !flow.liveVersionId) throw conflict('the flow was never published; publish it first');
    if (patch.state) changes.state = patch.state;
    if (patch.name !== undefined) changes.name = patch.name;
    if (patch.definition !== undefined || patch.name !== undefined) {
      changes.draftDefinition = completeDefinition(patch.name ?? flow.name, { ...flow.draftDefinition, ...(patch.definition ?? {}) });
      changes.draftRevision = flow.draftRevision + 1;
    }
    await em.getRepository(CollectionFlow).update({ id }, { ...changes, updatedAt: dbNow });
    return getFlowIn(em, organizationId, id, settings);
  });
}

/** Every reason the draft cannot be published (§5.1); empty when it can. */
async function publishIssues(em: EntityManager, flow: CollectionFlow): Promise<DefinitionIssue[]> {
  const d = flow.draftDefinition;
  const issues = routingIssues(d);
  if (!d.consentTemplateVersionId) {
    issues.push({ path: 'definition.consentTemplateVersionId', message: 'a consent template version is required to publish' });
  } else {
    const t = await em.getRepository(ConsentTemplateVersion).findOneBy({ id: d.consentTemplateVersionId, productId: flow.productId });
    if (!t) issues.push({ path: 'definition.consentTemplateVersionId', message: 'is not a consent template version of this product' });
  }
  const pinned = await pinnedVersions(em, flow.organizationId, d.questions);
  d.questions.forEach((q, i) => {
    if (!pinned.has(`${q.questionId}@${q.version}`)) {
      issues.push({ path: `definition.questions[${i}]`, message: `question ${q.questionId} has no version ${q.version}` });
    }
  });
  if (d.welcomeVideoId) {
    const video = await em.getRepository(CollectionWelcomeVideo).findOneBy({ id: d.welcomeVideoId, flowId: flow.id });
    if (!video || !['passed', 'cleared'].includes(video.state)) {
      issues.push({ path: 'definition.welcomeVideoId', message: 'the welcome video must be screened and passed or cleared' });
    }
  }
  return issues;
}

/**
 * Publishes the draft as the next immutable version (with the incentive set now) and makes the flow
 * live. The live link serves it at once; drafts and requests keep the version they pinned.
 */
export async function publishFlow(ds: DataSource, who: Teammate, id: string, draftRevision: number) {
  return ds.transaction(async (em) => {
    const flow = await findFlow(em, who.organizationId, id, true);
    if (flow.draftRevision !== draftRevision) throw staleRevision(flow.draftRevision);
    if (flow.state === 'archived') throw conflict('the flow is archived');
    const issues = await publishIssues(em, flow);
    if (issues.length > 0) {
      throw validationFailed(issues, `the flow cannot be published: ${issues.map((i) => `${i.path} ${i.message}`).join('; ')}`);
    }
    const [{ n }] = await em.query('SELECT coalesce(max(version_number), 0)::int AS n FROM collection_flow_versions WHERE flow_id = $1', [id]);
    const versionId = newId('flv');
    await em.getRepository(CollectionFlowVersion).insert({
      id: versionId,
      flowId: id,
      organizationId: flow.organizationId,
      productId: flow.productId,
      versionNumber: n + 1,
      definition: flow.draftDefinition,
      incentive: flow.incentive,
      contentHash: flowContentHash(flow.draftDefinition, flow.incentive),
      publishedBy: who.teammateId,
      publishedAt: dbNow,
    });
    await em.getRepository(CollectionFlow).update({ id }, { liveVersionId: versionId, state: 'live', updatedAt: dbNow });
    return { flowVersion: viewFlowVersion(await em.getRepository(CollectionFlowVersion).findOneByOrFail({ id: versionId })) };
  });
}

export async function setIncentive(ds: DataSource, organizationId: string, id: string, incentive: Incentive) {
  return ds.transaction(async (em) => {
    const flow = await findFlow(em, organizationId, id, true);
    if (flow.state === 'archived') throw conflict('the flow is archived');
    await em.getRepository(CollectionFlow).update({ id }, { incentive, updatedAt: dbNow });
    return { incentive, appliesFrom: 'next_publish' as const };
  });
}

/** What the live link serves: a live flow (by publicId) and its latest published version. */
export async function servedFlow(em: EntityManager, publicId: string): Promise<{ flow: CollectionFlow; version: CollectionFlowVersion }> {
  const flow = await em.getRepository(CollectionFlow).findOneBy({ publicId });
  if (!flow) throw notFound('flow');
  if (flow.state !== 'live' || !flow.liveVersionId) throw conflict('the flow is not live');
  return { flow, version: await em.getRepository(CollectionFlowVersion).findOneByOrFail({ id: flow.liveVersionId }) };
}
