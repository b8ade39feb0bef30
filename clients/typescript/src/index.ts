import type { components, operations, paths } from './schema';

export type { components, operations, paths };
/** The API's resources by name: `Schemas['Signal']`, `Schemas['ProofItem']`, ... */
export type Schemas = components['schemas'];
export { SIGNATURE_TOLERANCE_SECONDS, signWebhook, verifyWebhookSignature, type VerifyOptions } from './webhook-signature';
export { createServiceClient, type ServiceClient, type ServiceClientOptions } from './service-client';
