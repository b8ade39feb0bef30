import { array, boolean, date, mixed, number, object, string } from 'yup';
import { MENTION_PLATFORMS, createMention, importMention, listMentions } from '../../db/integrations/brand-mentions';
import { SOURCE_KINDS, SOURCE_SYSTEMS, getSource, listSources } from '../../db/integrations/sources';
import type { AppDeps } from '../app-deps';
import { OWNERS_AND_ADMINS, keyPrincipal, sessionPrincipal } from '../plugins/auth';
import { idParams } from '../plugins/path-params';
import { productTenant } from '../plugins/product-tenant';
import { dataOf, errorOf, pageOf, timestamp, UNKNOWN_PRODUCT_ID } from '../plugins/responses';
import { isoDateTime, openObject, pageQuery, RouteApp, strictObject } from '../plugins/validation';

/** A query list: comma-separated, repeated, or both; every value from `allowed`. */
function listParam<T extends string>(allowed: readonly T[]) {
  return mixed<T[]>()
    .transform((v: unknown) => (v === undefined ? v : (Array.isArray(v) ? v : [v]).flatMap((x) => String(x).split(',')).map((x) => x.trim()).filter(Boolean)))
    .test('allowed', `values must be among ${allowed.join(', ')}`, (v) => v === undefined || (Array.isArray(v) && v.every((x) => allowed.includes(x))))
    .meta({ description: `comma-separated or repeated: ${allowed.join(', ')}` });
}

const sourceQuery = strictObject({
  ...pageQuery,
  q: string().min(2).max(200),
  system: listParam(SOURCE_SYSTEMS),
  kind: listParam(SOURCE_KINDS),
  externalId: string().max(200),
  proofItemId: string().max(100),
  since: date(),
  until: date(),
});

const sourceSchema = object({
  id: string().required(),
  productId: string().required(),
  origin: object({ system: string().oneOf([...SOURCE_SYSTEMS]).required(), externalId: string().required(), url: string().nullable().defined() }).required(),
  kind: string().oneOf([...SOURCE_KINDS]).required(),
  capturedAt: timestamp().required(),
  capturedText: string().nullable().defined(),
  capturedTextWithheld: boolean().required(),
  title: string().nullable().defined(),
  attribution: openObject().nullable().defined(),
  links: object({
    proofItemId: string().nullable().defined(), versionId: string().nullable().defined(), signalId: string().nullable().defined(),
    valueEventId: string().nullable().defined(), dealId: string().nullable().defined(), brandMentionId: string().nullable().defined(),
  }).required(),
  provenance: array(object({
    step: string().required(), at: timestamp().required(), actor: object({ type: string().required(), id: string().nullable().defined() }).required(),
    ref: string().nullable().defined(), contentHash: string().nullable().defined(),
  })).defined(),
  policy: object({ reuse: string().oneOf(['allowed_with_consent', 'internal_only', 'blocked'] as const).required(),
    reasons: array(string().defined()).defined() }).required(),
  createdAt: timestamp().required(),
});

const mentionSchema = object({
  id: string().required(),
  productId: string().required(),
  platform: string().oneOf([...MENTION_PLATFORMS]).required(),
  url: string().required(),
  author: string().nullable().defined(),
  text: string().required(),
  rating: number().nullable().defined(),
  publishedAt: timestamp().nullable().defined(),
  reuse: string().oneOf(['allowed_with_consent', 'blocked'] as const).required(),
  importedItemId: string().nullable().defined(),
  createdAt: timestamp().required(),
});

const mentionBody = strictObject({
  productId: string().required().max(100),
  platform: string().required().oneOf([...MENTION_PLATFORMS]),
  url: string().required().url().max(2000),
  author: string().min(1).max(200),
  text: string().required().min(1).max(10_000),
  rating: number().min(0).max(5),
  publishedAt: isoDateTime(),
  reuse: string().oneOf(['allowed_with_consent', 'blocked'] as const),
}).required();

const imported = object({
  proofItemId: string().required(), versionId: string().required(), brandMentionId: string().required(), sourceId: string().nullable().defined(),
});

const canReadPrivate = (scopes: string[]) => scopes.includes('service:proof:read_private');

/** Attributed source records with provenance, and brand mentions managed in the workspace. */
export async function sourceRoutes(app: RouteApp, deps: AppDeps): Promise<void> {
  const ds = deps.dataSource;

  app.get('/api/v1/sources', {
    schema: { querystring: sourceQuery, response: { 200: pageOf(sourceSchema) } },
    config: { tag: 'integrations', auth: 'key', scope: 'service:sources:read', operationId: 'listSources',
      summary: 'Search attributed source records, newest first' },
  }, async (request) => {
    const { limit, cursor, ...filter } = request.query;
    return listSources(ds, productTenant(request).productId, filter, { limit, cursor }, canReadPrivate(keyPrincipal(request).scopes));
  });

  app.get('/api/v1/sources/:id', {
    schema: { params: idParams, response: { 404: errorOf('NOT_FOUND: no source record with this id in the key\'s product'), 200: dataOf(sourceSchema) } },
    config: { tag: 'integrations', auth: 'key', scope: 'service:sources:read', operationId: 'getSource', summary: 'One source record with its provenance' },
  }, async (request) => ({
    data: await getSource(ds, productTenant(request).productId, request.params.id, canReadPrivate(keyPrincipal(request).scopes)),
  }));

  app.post('/api/workspace/proof/brand-mentions', {
    schema: { body: mentionBody, response: { 404: UNKNOWN_PRODUCT_ID, 200: dataOf(mentionSchema), 201: dataOf(mentionSchema) } },
    config: { tag: 'integrations', ...OWNERS_AND_ADMINS, operationId: 'createBrandMention',
      summary: 'Record a brand mention; the same URL answers the existing one' },
  }, async (request, reply) => {
    const s = sessionPrincipal(request);
    const { mention, created } = await createMention(ds, s.organizationId, request.body, { type: 'teammate', id: s.teammateId });
    return reply.code(created ? 201 : 200).send({ data: mention });
  });

  app.get('/api/workspace/proof/brand-mentions', {
    schema: { querystring: strictObject(pageQuery), response: { 200: pageOf(mentionSchema) } },
    config: { tag: 'integrations', ...OWNERS_AND_ADMINS, operationId: 'listBrandMentions', summary: 'Brand mentions, newest first' },
  }, async (request) => listMentions(ds, sessionPrincipal(request).organizationId, request.query));

  app.post('/api/workspace/proof/brand-mentions/:id/import', {
    schema: { params: idParams, response: { 404: errorOf('NOT_FOUND: no brand mention with this id in the workspace'),
      409: errorOf('CONFLICT: the mention was already imported'), 422: errorOf('SOURCE_POLICY_BLOCKED: the mention\'s reuse is blocked (details.reasons)'),
      201: dataOf(imported) } },
    config: { tag: 'integrations', ...OWNERS_AND_ADMINS, operationId: 'importBrandMention',
      summary: 'Import a mention as a review item that renders nowhere until consented' },
  }, async (request, reply) => {
    const s = sessionPrincipal(request);
    return reply.code(201).send({ data: await importMention(ds, s.organizationId, request.params.id, s.teammateId) });
  });
}
