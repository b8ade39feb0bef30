import { ServiceError as TemporalServiceError } from '@temporalio/client';
import { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ServiceError } from '../../runtime/service-error';

export interface ErrorEnvelope {
  error: { code: string; message: string; requestId: string; details: unknown };
}

function envelope(request: FastifyRequest, error: ServiceError): ErrorEnvelope {
  return { error: { code: error.code, message: error.message, requestId: request.id, details: error.details } };
}

/** Fastify's own 4xx errors (bad JSON, wrong content type, body too large, bad URL) in the spec's terms. */
function fromFastify(error: FastifyError): ServiceError | null {
  const status = error.statusCode ?? 500;
  if (status < 400 || status >= 500) return null;
  let message = error.message;
  if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') message = 'content-type must be application/json';
  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') message = 'the body is larger than this endpoint accepts';
  return new ServiceError('VALIDATION_FAILED', 400, message, [{ path: '', message }]);
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
    return new ServiceError('VALIDATION_FAILED', 400, 'a value cannot be stored: out of range or invalid characters', [{ path: '', message: 'a value is out of range or has invalid characters' }]);
  }
  if (code === '23503') return new ServiceError('VALIDATION_FAILED', 400, 'the request refers to something that does not exist', [{ path: '', message: 'unknown reference' }]);
  if (code === '23505') return new ServiceError('CONFLICT', 409, 'this conflicts with something that already exists');
  if (code === '40P01' || code === '40001') return new ServiceError('SERVICE_UNAVAILABLE', 503, 'a concurrent change got in the way; retry', null, { 'retry-after': '1' });
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
  return ['ECONNREFUSED', 'ECONNRESET', '57P01', '57P03', '53300'].includes(code)
    || (error instanceof TemporalServiceError && typeof grpcCode === 'number' && GRPC_DOWN.includes(grpcCode))
    || /Connection terminated|timeout exceeded when trying to connect/i.test(String((error as Error)?.message));
}

/** One place turns every failure into the envelope; 5xx detail never leaves the process. */
/** Errors Fastify raises before routing (a malformed URL), in the same envelope and with the request id. */
export function frameworkErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const known = fromFastify(error) ?? new ServiceError('VALIDATION_FAILED', 400, 'malformed request');
  reply.code(known.status).header('x-request-id', request.id).type('application/json').send(envelope(request, known));
}

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | ServiceError, request: FastifyRequest, reply: FastifyReply) => {
    let known = error instanceof ServiceError ? error : fromFastify(error as FastifyError) ?? fromDatabase(error);
    if (!known) {
      request.log.error({ err: loggable(error) }, 'request failed');
      known = isDependencyDown(error)
        ? new ServiceError('SERVICE_UNAVAILABLE', 503, 'a dependency is unavailable; try again shortly')
        : new ServiceError('INTERNAL_ERROR', 500, 'internal error');
    }
    for (const [name, value] of Object.entries(known.headers)) reply.header(name, value);
    return reply.code(known.status).type('application/json').send(envelope(request, known));
  });
  app.setNotFoundHandler((request, reply) => {
    const error = new ServiceError('NOT_FOUND', 404, `no route ${request.method} ${request.url.split('?')[0]}`);
    return reply.code(404).send(envelope(request, error));
  });
}
