import { ServiceError as TemporalServiceError } from '@temporalio/client';
import { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { SealedSecretError } from '../../runtime/secret-box';
import { ServiceError } from '../../runtime/service-error';
import { isCustomerPath, isCustomerRequest } from './route-traits';

export interface ErrorEnvelope {
  error: { code: string; message: string; requestId: string; details: unknown };
}

function envelope(request: FastifyRequest, error: ServiceError): ErrorEnvelope {
  return { error: { code: error.code, message: error.message, requestId: request.id, details: error.details } };
}

/** The codes of the customer routes (docs/collection.md#customers) for the codes the rest of the API uses. */
const CUSTOMER_CODES: Record<string, string> = {
  VALIDATION_FAILED: 'INVALID_INPUT',
  INVALID_API_KEY: 'UNAUTHORIZED',
  SERVICE_UNAVAILABLE: 'UNAVAILABLE',
  AI_UNAVAILABLE: 'UNAVAILABLE',
};

/**
 * The customer envelope has no details, so a schema refusal names its fields in the message: a page can put
 * the sentence next to the field it is about (`identity.name: must not be only spaces`).
 */
export function customerError(error: ServiceError): { error: string; code: string } {
  const issues = error.code === 'VALIDATION_FAILED' && Array.isArray(error.details) ? error.details as Array<{ path?: string; message?: string }> : [];
  const named = issues.slice(0, 3).map((i) => (i.path ? `${i.path}: ${i.message ?? ''}` : i.message ?? '')).filter(Boolean);
  return { error: named.length ? `${error.message}: ${named.join('; ')}` : error.message, code: CUSTOMER_CODES[error.code] ?? error.code };
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Renders refusals as a page instead of JSON (the no-JavaScript form). */
    htmlError?: (error: { error: string; code: string }, status: number) => string;
  }
}

function send(request: FastifyRequest, reply: FastifyReply, error: ServiceError): FastifyReply {
  request.errorCode = error.code;
  for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
  reply.code(error.status);
  // Customer routes answer the simple `{error, code}` body.
  if (!isCustomerRequest(request)) return reply.type('application/json').send(envelope(request, error));
  const body = customerError(error);
  const html = request.routeOptions?.config?.htmlError;
  if (html) return reply.type('text/html; charset=utf-8').header('cache-control', 'no-store').send(html(body, error.status));
  return reply.type('application/json').send(body);
}

/** Fastify's own 4xx errors (bad JSON, wrong content type, body too large, bad URL) in the spec's terms. */
function fromFastify(error: FastifyError, customer = false): ServiceError | null {
  const status = error.statusCode ?? 500;
  if (status < 400 || status >= 500) return null;
  let message = error.message;
  if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') message = 'content-type must be application/json';
  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') message = 'the body is larger than this endpoint accepts';
  // The customer routes name these two apart (docs/collection.md#customers); the key API keeps them as a 400.
  if (customer && error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return new ServiceError('TOO_LARGE', message);
  if (customer && error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
    return new ServiceError('UNSUPPORTED_MEDIA_TYPE', 'this content-type is not accepted here');
  }
  return new ServiceError('VALIDATION_FAILED', message, [{ path: '', message }]);
}

/**
 * Database refusals that come from the request, not from a fault: data exceptions (class 22: out of
 * range, invalid characters), a reference to something that does not exist, a duplicate, and the
 * losers of a deadlock or serialization conflict, which may simply retry.
 */
function fromDatabase(error: unknown): ServiceError | null {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return null;
  if (/^22[0-9A-Z]{3}$/.test(code)) {
    return new ServiceError('VALIDATION_FAILED', 'a value cannot be stored: out of range or invalid characters',
      [{ path: '', message: 'a value is out of range or has invalid characters' }]);
  }
  if (code === '23503') return new ServiceError('VALIDATION_FAILED', 'the request refers to something that does not exist',
    [{ path: '', message: 'unknown reference' }]);
  if (code === '23505') return new ServiceError('CONFLICT', 'this conflicts with something that already exists');
  if (code === '40P01' || code === '40001') return new ServiceError('SERVICE_UNAVAILABLE', 'a concurrent change got in the way; retry', null,
    { 'retry-after': '1' });
  return null;
}

/** What may be logged of a failure: never query parameters, which hold customer text. */
function loggable(error: unknown): Record<string, unknown> {
  const e = error as { name?: string; message?: string; code?: string; stack?: string };
  return { name: e?.name, message: e?.message, code: e?.code, stack: e?.stack };
}

// gRPC UNAVAILABLE and DEADLINE_EXCEEDED: the Temporal frontend is down or too slow to answer.
const GRPC_DOWN = [14, 4];

function isDependencyDown(error: unknown): boolean {
  const code = (error as { code?: string } | null)?.code ?? '';
  const grpcCode = (error as { cause?: { code?: unknown } } | null)?.cause?.code;
  // Class 08 and 57P0x: the connection failed or an administrator (or a failover) ended the backend.
  return ['ECONNREFUSED', 'ECONNRESET', 'EPIPE', '53300'].includes(code) || /^(08[0-9A-Z]{3}|57P0[1-3])$/.test(code)
    || (error instanceof TemporalServiceError && typeof grpcCode === 'number' && GRPC_DOWN.includes(grpcCode))
    || /Connection terminated|not queryable|timeout exceeded when trying to connect/i.test(String((error as Error)?.message));
}

/** Errors Fastify raises before routing (a malformed URL), in the same envelope and with the request id. */
export function frameworkErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const known = fromFastify(error, isCustomerPath(request.url)) ?? new ServiceError('VALIDATION_FAILED', 'malformed request');
  send(request, reply.header('x-request-id', request.id), known);
}

/** One place turns every failure into the envelope; 5xx detail never leaves the process. */
export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | ServiceError, request: FastifyRequest, reply: FastifyReply) => {
    let known = error instanceof ServiceError ? error : fromFastify(error as FastifyError, isCustomerRequest(request)) ?? fromDatabase(error);
    if (!known && error instanceof SealedSecretError) {
      // The deployment's key ring is wrong, not the request: logged with the key id, answered as unavailable.
      request.log.error({ keyId: error.keyId }, error.message);
      known = new ServiceError('SERVICE_UNAVAILABLE', 'a stored secret cannot be opened with this deployment\'s keys; an operator must fix SV_SECRET_KEYS');
    }
    if (!known) {
      request.log.error({ err: loggable(error) }, 'request failed');
      known = isDependencyDown(error)
        ? new ServiceError('SERVICE_UNAVAILABLE', 'a dependency is unavailable; try again shortly', null, { 'retry-after': '1' })
        : new ServiceError('INTERNAL_ERROR', 'internal error');
    }
    return send(request, reply, known);
  });
  app.setNotFoundHandler((request, reply) => {
    const error = new ServiceError('NOT_FOUND', `no route ${request.method} ${request.url.split('?')[0]}`);
    return send(request, reply, error);
  });
}
