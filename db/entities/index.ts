import { ConsentGrant } from './consent-grant';
import { Environment } from './environment';
import { IdempotencyRecord } from './idempotency-record';
import { IdentityNonce } from './identity-nonce';
import { Organization } from './organization';
import { OutboxEvent } from './outbox-event';
import { Product } from './product';
import { ProofApprovalRequest } from './proof-approval-request';
import { ProofEvent } from './proof-event';
import { ProofAsset } from './proof-asset';
import { ProofItem } from './proof-item';
import { ProofPlacement } from './proof-placement';
import { ProofPlacementItem } from './proof-placement-item';
import { ProofRevocation } from './proof-revocation';
import { ProofVersion } from './proof-version';
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
export { ConsentGrant, ProofApprovalRequest, ProofEvent, ProofItem, ProofRevocation, ProofVersion };
export { ProofAsset, ProofPlacement, ProofPlacementItem };

export const ENTITIES = [
  Organization, Product, Environment, Teammate, TeammateSession, ServiceKey, IdempotencyRecord,
  RateLimitWindow, IdentityNonce, OutboxEvent, WebhookEndpoint, WebhookDelivery, WebhookAttempt,
  ProofItem, ProofVersion, ConsentGrant, ProofApprovalRequest, ProofRevocation, ProofEvent,
  ProofPlacement, ProofPlacementItem, ProofAsset,
];
