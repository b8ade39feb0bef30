import { DataSource } from 'typeorm';
import { conflict, notFound } from '../../runtime/service-error';
import { WebhookAttempt, WebhookDelivery } from '../entities';
import { DeliveryStatus } from '../entities/webhook-delivery';
import { Page, PageRequest, pageOf } from '../pagination';
import { newId } from '../rules/ids';
import { findEndpoint } from './webhook-endpoints';

// The delivery log a workspace reads, and replays.

export interface DeliveryView {
  id: string;
  endpointId: string;
  eventId: string;
  eventType: string;
  status: DeliveryStatus;
  attemptCount: number;
  lastError: string | null;
  replayOfId: string | null;
  createdAt: string;
  completedAt: string | null;
}

function viewDelivery(d: WebhookDelivery): DeliveryView {
  return {
    id: d.id, endpointId: d.endpointId, eventId: d.eventId, eventType: d.eventType, status: d.status,
    attemptCount: d.attemptCount, lastError: d.lastError, replayOfId: d.replayOfId,
    createdAt: d.createdAt.toISOString(), completedAt: d.completedAt?.toISOString() ?? null,
  };
}

export interface DeliveryFilters {
  endpointId?: string;
  status?: DeliveryStatus;
  eventType?: string;
}

export async function listDeliveries(
  ds: DataSource, organizationId: string, filters: DeliveryFilters, page: PageRequest,
): Promise<Page<DeliveryView>> {
  const qb = ds.getRepository(WebhookDelivery).createQueryBuilder('d')
    .where('d.organization_id = :organizationId', { organizationId });
  if (filters.endpointId) qb.andWhere('d.endpoint_id = :endpointId', { endpointId: filters.endpointId });
  if (filters.status) qb.andWhere('d.status = :status', { status: filters.status });
  if (filters.eventType) qb.andWhere('d.event_type = :eventType', { eventType: filters.eventType });
  return pageOf(qb, 'd', page, viewDelivery);
}

async function findDelivery(ds: DataSource, organizationId: string, id: string): Promise<WebhookDelivery> {
  const delivery = await ds.getRepository(WebhookDelivery).findOneBy({ id, organizationId });
  if (!delivery) throw notFound('webhook delivery');
  return delivery;
}

export async function getDelivery(ds: DataSource, organizationId: string, id: string) {
  const delivery = await findDelivery(ds, organizationId, id);
  const attempts = await ds.getRepository(WebhookAttempt).find({ where: { deliveryId: id }, order: { attempt: 'ASC' } });
  return {
    ...viewDelivery(delivery),
    body: delivery.payload,
    attempts: attempts.map((a) => ({
      attempt: a.attempt, startedAt: a.startedAt.toISOString(), durationMs: a.durationMs,
      statusCode: a.statusCode, error: a.error, responseExcerpt: a.responseExcerpt,
    })),
  };
}

/** A new delivery of the same event id and byte-identical body; the relay starts it. */
export async function replayDelivery(ds: DataSource, organizationId: string, id: string): Promise<DeliveryView> {
  const original = await findDelivery(ds, organizationId, id);
  if (original.status === 'pending') throw conflict('the delivery is still pending; replay it once it has delivered or failed');
  await findEndpoint(ds, organizationId, original.endpointId);
  const replay = await ds.getRepository(WebhookDelivery).save({
    id: newId('whd'),
    organizationId,
    endpointId: original.endpointId,
    productId: original.productId,
    eventId: original.eventId,
    eventType: original.eventType,
    payload: original.payload,
    status: 'pending' as const,
    attemptCount: 0,
    lastError: null,
    replayOfId: original.id,
    workflowStarted: false,
    completedAt: null,
  });
  return viewDelivery(replay);
}

const TEST_EVENT_TYPE = 'webhook.test';

/**
 * A `webhook.test` event for one endpoint only, whatever it subscribes to: a pending delivery that the
 * relay starts like any other, so it is signed, retried and logged with its attempts the same way.
 */
export async function sendTestEvent(ds: DataSource, organizationId: string, endpointId: string): Promise<DeliveryView> {
  await findEndpoint(ds, organizationId, endpointId);
  const eventId = newId('evt');
  const payload = JSON.stringify({
    id: eventId, type: TEST_EVENT_TYPE, createdAt: new Date().toISOString(), organizationId, productId: null,
    data: { endpointId, message: 'A test event sent from the workspace; nothing happened.' },
  });
  const delivery = await ds.getRepository(WebhookDelivery).save({
    id: newId('whd'), organizationId, endpointId, productId: null, eventId, eventType: TEST_EVENT_TYPE, payload,
    status: 'pending' as const, attemptCount: 0, lastError: null, replayOfId: null, workflowStarted: false, completedAt: null,
  });
  return viewDelivery(delivery);
}
