import { array, boolean, number, object, string } from 'yup';
import { named, timestamp } from '../plugins/responses';

/** Response schemas of the webhook routes. */

export const webhookEndpointSchema = named('WebhookEndpoint', object({
  id: string().required(),
  url: string().required(),
  description: string().required(),
  subscriptions: array(string().defined()).defined().meta({ description: 'event names, prefixes such as proof.*, or *' }),
  enabled: boolean().required(),
  createdAt: timestamp().required(),
  updatedAt: timestamp().required(),
}), {
  id: 'whe_1k82cp8a9g8gfhm76njj739pt', url: 'https://hooks.example.com/a', description: 'CRM',
  subscriptions: ['signal.created', 'proof.*'], enabled: true, createdAt: '2026-11-22T19:47:29.225Z', updatedAt: '2026-11-22T19:47:29.225Z',
});

export const webhookEndpointWithSecretSchema = named('WebhookEndpointWithSecret', object({
  endpoint: webhookEndpointSchema.defined(),
  secret: string().required().meta({ description: 'the signing secret (whsec_...): shown in this answer only' }),
}));

export const webhookEndpointDeletedSchema = named('WebhookEndpointDeleted', object({
  id: string().required(),
  deleted: boolean().required(),
}));

const deliveryFields = {
  id: string().required(),
  endpointId: string().required(),
  eventId: string().required(),
  eventType: string().required(),
  status: string().required().oneOf(['pending', 'delivered', 'failed'] as const),
  attemptCount: number().integer().required(),
  lastError: string().nullable().defined(),
  replayOfId: string().nullable().defined(),
  createdAt: timestamp().required(),
  completedAt: timestamp().nullable().defined(),
};

export const webhookDeliverySchema = named('WebhookDelivery', object(deliveryFields));

export const webhookDeliveryDetailSchema = named('WebhookDeliveryDetail', object({
  ...deliveryFields,
  body: string().required().meta({ description: 'the exact bytes that were signed and sent' }),
  attempts: array(object({
    attempt: number().integer().required(),
    startedAt: timestamp().required(),
    durationMs: number().integer().nullable().defined(),
    statusCode: number().integer().nullable().defined(),
    error: string().nullable().defined(),
    responseExcerpt: string().nullable().defined(),
  })).defined(),
}));
