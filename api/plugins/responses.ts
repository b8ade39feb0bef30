import { AnySchema, array, mixed, object, string } from 'yup';

/**
 * Response schemas: yup objects that document what a route answers. They are not used to validate
 * at run time; the OpenAPI document is built from them and the suite checks real answers against it.
 *
 * Meta the OpenAPI builder reads (api/plugins/openapi.ts): `name` (a component under
 * #/components/schemas), `description`, `format`, `example`, `open` (any properties), `jsonSchema`
 * (the JSON Schema as given, for shapes yup cannot say), `contentType` and `noContent` (non-JSON answers).
 */

/** A reusable resource: it becomes #/components/schemas/<name> and the generated client's type name. */
export function named<S extends AnySchema>(name: string, schema: S, example?: unknown): S {
  return schema.meta({ name, ...(example === undefined ? {} : { example }) }) as S;
}

/** `{ data: <schema> }`, the body of every single-resource answer. */
export function dataOf(schema: AnySchema) {
  return object({ data: schema.defined() });
}

/** `{ data: [<item>], nextCursor }`, the body of every list answer. */
export function pageOf(item: AnySchema) {
  return object({ data: array(item).defined(), nextCursor: string().nullable().defined() });
}

/** A timestamp as the API writes it: an ISO 8601 string. */
export const timestamp = () => string().meta({ format: 'date-time' });

/** Any JSON value (a free-form property such as a signal's `context`). */
export const anyJson = () => mixed().meta({ jsonSchema: {} });

/** An object with any properties. */
export const anyObject = () => object().meta({ open: true });

/** The error envelope of /api/v1, /api/workspace and /api/public. */
export const errorEnvelope = named('ErrorEnvelope', object({
  error: object({
    code: string().required().meta({ description: 'the spec\'s error code, e.g. VALIDATION_FAILED' }),
    message: string().required(),
    requestId: string().required(),
    details: anyJson().meta({ description: 'field issues for VALIDATION_FAILED, otherwise null or a small object' }),
  }).required(),
}), { error: { code: 'NOT_FOUND', message: 'signal not found', requestId: 'req_5f0c2a9d1e7b3c4a8d6e2f10', details: null } });

/** The error body of /api/proof (docs/collection.md#endpoints-customers): `{ error, code }`, nothing else. */
export const proofErrorBody = named('ProofErrorBody', mixed().meta({
  jsonSchema: {
    type: 'object',
    properties: { error: { type: 'string', description: 'a readable message' },
      code: { type: 'string', description: 'the error code, e.g. VALIDATION_FAILED' } },
    required: ['error', 'code'],
    additionalProperties: false,
  },
}), { error: 'draft not found', code: 'NOT_FOUND' });

/** The 429 of a route that stores a customer submission (submit, nojs, v1): docs/collection.md#endpoints-customers. */
export const CEILING_OR_RATE = 'RATE_LIMITED, or INTAKE_SAFETY_CEILING: the workspace reached its daily safety ceiling '
  + '(PROOF_DAILY_SUBMISSION_CEILING); retry-after names the next UTC day';

/**
 * An error status a route answers beyond the ones its auth, input and idempotency imply: `errorOf('CONFLICT: ...')`;
 * `retryAfter` documents the Retry-After header it carries.
 */
export function errorOf(description: string, options: { retryAfter?: boolean } = {}) {
  return errorEnvelope.meta(options.retryAfter ? { description, retryAfter: true } : { description });
}

/** A status without a body (204, 304, 416). */
export function noContent(description: string) {
  return mixed().meta({ noContent: true, description });
}

/** A body that is not JSON: a file or a stream. */
export function fileOf(contentType: string, description: string) {
  return string().meta({ contentType, format: 'binary', description });
}

/** Refusals routes of several domains document alike. */
export const UNKNOWN_PRODUCT_ID = errorOf('NOT_FOUND: productId is not a product of this workspace');
export const NO_SUCH_PRODUCT = errorOf('NOT_FOUND: no such product in the workspace');
