/**
 * Every error code the service answers and its HTTP status: a throw names only the code, so the status
 * of a code is the same everywhere and a misspelt code fails to compile. The customer routes
 * (`/api/proof/*`) answer some of them under their own names (INVALID_INPUT, UNAUTHORIZED, UNAVAILABLE;
 * docs/collection.md#customers).
 */
export const ERROR_STATUS = {
  VALIDATION_FAILED: 400,
  INVALID_INPUT: 400,
  INVALID_API_KEY: 401,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  INSUFFICIENT_SCOPE: 403,
  ENVIRONMENT_SCOPE_MISMATCH: 403,
  PRODUCT_SCOPE_REQUIRED: 403,
  PRODUCT_SCOPE_UNAVAILABLE: 403,
  KEY_AUDIENCE_MISMATCH: 403,
  HUMAN_APPROVAL_REQUIRED: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  ALREADY_USED: 409,
  CONSENT_INVALID: 409,
  OPTED_OUT: 409,
  REVOKED_FINAL: 409,
  IDEMPOTENCY_IN_PROGRESS: 409,
  IDEMPOTENCY_KEY_REUSED: 409,
  EXPIRED: 410,
  RECOVERY_WINDOW_CLOSED: 410,
  TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  CHECKSUM_MISMATCH: 422,
  NOT_ELIGIBLE: 422,
  ASK_POLICY_FAILED: 422,
  CITATION_VALIDATION_FAILED: 422,
  SOURCE_POLICY_BLOCKED: 422,
  RATE_LIMITED: 429,
  INTAKE_SAFETY_CEILING: 429,
  AI_BUDGET_EXCEEDED: 429,
  INTERNAL_ERROR: 500,
  SERVICE_UNAVAILABLE: 503,
  UNAVAILABLE: 503,
  AI_UNAVAILABLE: 503,
} as const satisfies Record<string, number>;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** Every refusal the service makes: the spec's error code, its HTTP status (from ERROR_STATUS) and a message for people. */
export class ServiceError extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: unknown = null,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ServiceError';
    this.status = ERROR_STATUS[code];
  }
}

export interface FieldIssue {
  path: string;
  message: string;
}

export const notFound = (what = 'resource') => new ServiceError('NOT_FOUND', `${what} not found`);
export const forbidden = (message: string) => new ServiceError('FORBIDDEN', message);
export const conflict = (message: string) => new ServiceError('CONFLICT', message);
export const invalidCredential = (message: string) => new ServiceError('INVALID_API_KEY', message);
export const validationFailed = (issues: FieldIssue[], message = 'the request does not match the schema') =>
  new ServiceError('VALIDATION_FAILED', message, issues);
