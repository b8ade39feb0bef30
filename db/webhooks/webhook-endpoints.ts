import { DataSource } from 'typeorm';
import { conflict, notFound } from '../../runtime/service-error';
import { WebhookEndpoint } from '../entities';
import { newId } from '../rules/ids';
import { newSecret } from '../rules/secrets';
import { dbNow } from '../clock';

// A workspace's webhook endpoints and what they subscribe to.

export const MAX_ENDPOINTS = 20;
export const MAX_SUBSCRIPTIONS = 50;
/** Exact event names, a prefix such as `proof.*`, or `*`. */
export const SUBSCRIPTION_PATTERN = /^(\*|[a-z][a-z_]*(\.[a-z][a-z_]*)*(\.\*)?)$/;

export function subscriptionMatches(subscriptions: string[], eventType: string): boolean {
  return subscriptions.some((s) => s === '*' || s === eventType || (s.endsWith('.*') && eventType.startsWith(s.slice(0, -1))));
}

export interface EndpointView {
  id: string;
  url: string;
  description: string;
  subscriptions: string[];
  enabled: boolean;
  createdAt: string;
  updatedAt: string;
}

function viewEndpoint(e: WebhookEndpoint): EndpointView {
  return {
    id: e.id, url: e.url, description: e.description, subscriptions: e.subscriptions, enabled: e.enabled,
    createdAt: e.createdAt.toISOString(), updatedAt: e.updatedAt.toISOString(),
  };
}

export interface EndpointWithSecret {
  endpoint: EndpointView;
  /** Shown at creation and rotation only. */
  secret: string;
}

export interface EndpointInput {
  url: string;
  description?: string;
  subscriptions: string[];
  enabled?: boolean;
}

export async function createEndpoint(ds: DataSource, organizationId: string, input: EndpointInput): Promise<EndpointWithSecret> {
  return ds.transaction(async (em) => {
    // Serialises creates per workspace so that two at once cannot both pass the limit.
    await em.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`webhook-endpoints:${organizationId}`]);
    const repo = em.getRepository(WebhookEndpoint);
    const count = await repo.createQueryBuilder('e')
      .where('e.organization_id = :organizationId AND e.deleted_at IS NULL', { organizationId }).getCount();
    if (count >= MAX_ENDPOINTS) throw conflict(`a workspace has at most ${MAX_ENDPOINTS} webhook endpoints`);
    const secret = newSecret('whsec');
    const endpoint = await repo.save({
      id: newId('whe'),
      organizationId,
      url: input.url,
      description: input.description ?? '',
      subscriptions: [...new Set(input.subscriptions)],
      enabled: input.enabled ?? true,
      secret,
      deletedAt: null,
    });
    return { endpoint: viewEndpoint(endpoint), secret };
  });
}

export async function findEndpoint(ds: DataSource, organizationId: string, id: string): Promise<WebhookEndpoint> {
  const endpoint = await ds.getRepository(WebhookEndpoint).createQueryBuilder('e')
    .where('e.id = :id AND e.organization_id = :organizationId AND e.deleted_at IS NULL', { id, organizationId })
    .getOne();
  if (!endpoint) throw notFound('webhook endpoint');
  return endpoint;
}

export async function listEndpoints(ds: DataSource, organizationId: string): Promise<EndpointView[]> {
  const rows = await ds.getRepository(WebhookEndpoint).createQueryBuilder('e')
    .where('e.organization_id = :organizationId AND e.deleted_at IS NULL', { organizationId })
    .orderBy('e.created_at', 'ASC').addOrderBy('e.id', 'ASC')
    .getMany();
  return rows.map(viewEndpoint);
}

export async function getEndpoint(ds: DataSource, organizationId: string, id: string): Promise<EndpointView> {
  return viewEndpoint(await findEndpoint(ds, organizationId, id));
}

export async function updateEndpoint(
  ds: DataSource, organizationId: string, id: string, patch: Partial<EndpointInput>,
): Promise<EndpointView> {
  const endpoint = await findEndpoint(ds, organizationId, id);
  if (patch.url !== undefined) endpoint.url = patch.url;
  if (patch.description !== undefined) endpoint.description = patch.description;
  if (patch.subscriptions !== undefined) endpoint.subscriptions = [...new Set(patch.subscriptions)];
  if (patch.enabled !== undefined) endpoint.enabled = patch.enabled;
  return viewEndpoint(await ds.getRepository(WebhookEndpoint).save(endpoint));
}

/** Deletes an endpoint for good; its delivery log stays readable. */
export async function deleteEndpoint(ds: DataSource, organizationId: string, id: string): Promise<void> {
  await findEndpoint(ds, organizationId, id);
  await ds.getRepository(WebhookEndpoint).update(id, { deletedAt: dbNow, enabled: false });
}

/** A new secret at once: the next attempt of every delivery signs with it, and the old one is gone. */
export async function rotateEndpointSecret(ds: DataSource, organizationId: string, id: string): Promise<EndpointWithSecret> {
  const endpoint = await findEndpoint(ds, organizationId, id);
  const secret = newSecret('whsec');
  endpoint.secret = secret;
  const saved = await ds.getRepository(WebhookEndpoint).save(endpoint);
  return { endpoint: viewEndpoint(saved), secret };
}
