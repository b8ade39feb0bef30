import { Environment } from './environment';
import { IdempotencyRecord } from './idempotency-record';
import { IdentityNonce } from './identity-nonce';
import { Organization } from './organization';
import { OutboxEvent } from './outbox-event';
import { Product } from './product';
import { RateLimitWindow } from './rate-limit-window';
import { ServiceKey } from './service-key';
import { Teammate } from './teammate';
import { TeammateSession } from './teammate-session';
import { WebhookAttempt } from './webhook-attempt';
import { WebhookDelivery } from './webhook-delivery';
import { WebhookEndpoint } from './webhook-endpoint';

export {
  Environment, IdempotencyRecord, IdentityNonce, Organization, OutboxEvent, Product, RateLimitWindow,
  ServiceKey, Teammate, TeammateSession, WebhookAttempt, WebhookDelivery, WebhookEndpoint,
};

export const ENTITIES = [
  Organization, Product, Environment, Teammate, TeammateSession, ServiceKey, IdempotencyRecord,
  RateLimitWindow, IdentityNonce, OutboxEvent, WebhookEndpoint, WebhookDelivery, WebhookAttempt,
];
