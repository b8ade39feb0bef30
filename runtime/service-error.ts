/** Every refusal the service makes: the spec's error code, its HTTP status and a message for people. */
export class ServiceError extends Error {
  constructor(
    readonly code: string,
    readonly status: number,
    message: string,
    readonly details: unknown = null,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ServiceError';
  }
}

export interface FieldIssue {
  path: string;
  message: string;
}

export const notFound = (what = 'resource') => new ServiceError('NOT_FOUND', 404, `${what} not found`);
export const forbidden = (message: string) => new ServiceError('FORBIDDEN', 403, message);
export const conflict = (message: string) => new ServiceError('CONFLICT', 409, message);
export const invalidCredential = (message: string) => new ServiceError('INVALID_API_KEY', 401, message);
export const validationFailed = (issues: FieldIssue[], message = 'the request does not match the schema') =>
  new ServiceError('VALIDATION_FAILED', 400, message, issues);
