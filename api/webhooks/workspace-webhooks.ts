import { array, boolean, string } from 'yup';
import { DeliveryStatus } from '../../db/entities/webhook-delivery';
import {
  MAX_SUBSCRIPTIONS, SUBSCRIPTION_PATTERN, createEndpoint, deleteEndpoint, getEndpoint, listEndpoints, rotateEndpointSecret, updateEndpoint,
} from '../../db/webhooks/webhook-endpoints';
import { getDelivery, listDeliveries, replayDelivery, sendTestEvent } from '../../db/webhooks/webhook-deliveries';
import { checkWebhookUrl } from '../../runtime/webhook-target';
import { OWNERS_AND_ADMINS, sessionPrincipal } from '../plugins/auth';
import type { AppDeps } from '../app-deps';
import { dataOf, errorOf, pageOf } from '../plugins/responses';
import {
  webhookDeliveryDetailSchema, webhookDeliverySchema, webhookEndpointDeletedSchema, webhookEndpointSchema, webhookEndpointWithSecretSchema,
} from './schemas';
import { idParams } from '../plugins/path-params';
import { pageQuery, RouteApp, strictObject } from '../plugins/validation';

const fields = {
  url: string().max(2048),
  description: string().max(500),
  subscriptions: array(string().required().max(200).matches(SUBSCRIPTION_PATTERN, 'must be an event name, a prefix such as proof.*, or *'))
    .min(1).max(MAX_SUBSCRIPTIONS),
  enabled: boolean(),
};
const createBody = strictObject({ ...fields, url: fields.url.required(), subscriptions: fields.subscriptions.required() }).required();
const updateBody = strictObject(fields).required()
  .test('not-empty', 'name at least one of url, description, subscriptions, enabled', (v) => Object.keys(v ?? {}).length > 0);
const deliveryQuery = strictObject({
  ...pageQuery,
  endpointId: string().max(100),
  status: string().oneOf(['pending', 'delivered', 'failed'] as const),
  eventType: string().max(200),
});

const config = (operationId: string, summary: string) => ({ tag: 'webhooks' as const, ...OWNERS_AND_ADMINS, operationId, summary });

/** Webhook endpoints and the delivery log: workspace owners and admins only. */
export async function workspaceWebhookRoutes(app: RouteApp, deps: AppDeps): Promise<void> {
  const ds = deps.dataSource;
  const allowPrivate = deps.config.webhookAllowPrivateTargets;
  const org = (request: Parameters<typeof sessionPrincipal>[0]) => sessionPrincipal(request).organizationId;

  app.get('/api/workspace/webhooks/endpoints', {
    schema: { response: { 200: pageOf(webhookEndpointSchema) } },
    config: config('listWebhookEndpoints', 'Webhook endpoints of the workspace (at most 20)'),
  }, async (request) => ({ data: await listEndpoints(ds, org(request)), nextCursor: null }));

  app.post('/api/workspace/webhooks/endpoints', {
    schema: { body: createBody, response: { 201: dataOf(webhookEndpointWithSecretSchema), 409: errorOf('CONFLICT: the workspace already has 20 endpoints') } },
    config: config('createWebhookEndpoint', 'Create an endpoint; the signing secret is in the answer this once'),
  }, async (request, reply) => {
    const url = await checkWebhookUrl(request.body.url, allowPrivate);
    return reply.code(201).send({ data: await createEndpoint(ds, org(request), { ...request.body, url }) });
  });

  app.get('/api/workspace/webhooks/endpoints/:id', {
    schema: { params: idParams, response: { 200: dataOf(webhookEndpointSchema) } }, config: config('getWebhookEndpoint', 'One endpoint'),
  }, async (request) => ({ data: await getEndpoint(ds, org(request), request.params.id) }));

  app.patch('/api/workspace/webhooks/endpoints/:id', {
    schema: { params: idParams, body: updateBody, response: { 200: dataOf(webhookEndpointSchema) } },
    config: config('updateWebhookEndpoint', 'Change url, description, subscriptions or enabled'),
  }, async (request) => {
    const patch = { ...request.body };
    if (patch.url !== undefined) patch.url = await checkWebhookUrl(patch.url, allowPrivate);
    return { data: await updateEndpoint(ds, org(request), request.params.id, patch) };
  });

  app.delete('/api/workspace/webhooks/endpoints/:id', {
    schema: { params: idParams, response: { 200: dataOf(webhookEndpointDeletedSchema) } },
    config: config('deleteWebhookEndpoint', 'Delete an endpoint; its delivery log stays'),
  }, async (request) => {
    await deleteEndpoint(ds, org(request), request.params.id);
    return { data: { id: request.params.id, deleted: true } };
  });

  app.post('/api/workspace/webhooks/endpoints/:id/rotate-secret', {
    schema: { params: idParams, response: { 200: dataOf(webhookEndpointWithSecretSchema) } },
    config: config('rotateWebhookSecret', 'New signing secret, shown once; the old one stops verifying at once'),
  }, async (request) => ({ data: await rotateEndpointSecret(ds, org(request), request.params.id) }));

  app.post('/api/workspace/webhooks/endpoints/:id/test', {
    schema: { params: idParams, response: { 201: dataOf(webhookDeliverySchema), 404: errorOf('NOT_FOUND: no such endpoint in the workspace') } },
    config: config('sendWebhookTestEvent', 'Send a signed webhook.test event to this endpoint only; it shows in the delivery log with its attempts'),
  }, async (request, reply) => reply.code(201).send({ data: await sendTestEvent(ds, org(request), request.params.id) }));

  app.get('/api/workspace/webhooks/deliveries', {
    schema: { querystring: deliveryQuery, response: { 200: pageOf(webhookDeliverySchema) } },
    config: config('listWebhookDeliveries', 'Delivery log, newest first'),
  }, async (request) => {
    const { limit, cursor, ...filters } = request.query;
    return listDeliveries(ds, org(request), { ...filters, status: filters.status as DeliveryStatus | undefined }, { limit, cursor });
  });

  app.get('/api/workspace/webhooks/deliveries/:id', {
    schema: { params: idParams, response: { 200: dataOf(webhookDeliveryDetailSchema) } },
    config: config('getWebhookDelivery', 'One delivery with its body and every attempt'),
  }, async (request) => ({ data: await getDelivery(ds, org(request), request.params.id) }));

  app.post('/api/workspace/webhooks/deliveries/:id/replay', {
    schema: { params: idParams, response: { 201: dataOf(webhookDeliverySchema) } },
    config: config('replayWebhookDelivery', 'Send again: same event id and body, new delivery id'),
  }, async (request, reply) => reply.code(201).send({ data: await replayDelivery(ds, org(request), request.params.id) }));
}
