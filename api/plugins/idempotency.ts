import { Readable } from 'node:stream';
import { FastifyInstance, FastifyRequest } from 'fastify';
import { canonicalJson } from '../../db/rules/canonical-json';
import { DataSource } from 'typeorm';
import {
  AfterWrite, IDEMPOTENCY_KEY_PATTERN, IdempotencyClaimRef, claimIdempotencyKey, completeIdempotencyKey, releaseIdempotencyKey,
} from '../../db/platform/idempotency';
import { sha256Hex } from '../../db/rules/secrets';
import { ServiceError, validationFailed } from '../../runtime/service-error';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Proof writes take an Idempotency-Key header; `required` for submissions. */
    idempotency?: 'optional' | 'required';
    /** The code for the same key with a different request (CONFLICT on submissions, by the spec). */
    idempotencyReuseCode?: 'IDEMPOTENCY_KEY_REUSED' | 'CONFLICT';
  }
  interface FastifyRequest {
    idempotency: IdempotencyClaimRef | null;
  }
}

function credentialOf(request: FastifyRequest): string {
  const p = request.principal;
  if (p?.kind === 'key') return p.id;
  if (p?.kind === 'session') return p.teammateId;
  if (p?.kind === 'identity') return `${p.productId}:${p.endUserId}`;
  throw new Error('idempotent routes need an authenticated principal');
}

/**
 * Stores the route's answer (`status`, `{data: map(result)}`) in the write's own transaction, when the
 * request carries an Idempotency-Key: an API that dies after the commit and before answering leaves a
 * completed record, which the retry replays instead of writing again. onSend later rewrites it with the
 * exact bytes sent.
 */
export function answerWithWrite<T>(request: FastifyRequest, status: number, map: (result: T) => unknown = (result) => result): AfterWrite | undefined {
  const claim = request.idempotency;
  if (!claim) return undefined;
  return (em, result) => completeIdempotencyKey(em, claim, status, JSON.stringify({ data: map(result as T) }));
}

/**
 * The spec's four rules: a repeat replays the stored success with `idempotent-replayed: true`; a
 * different request under the same key is refused; a repeat while the first runs is refused; only
 * successes are stored (for 24 hours), so after an error the key is free again.
 */
export function registerIdempotency(app: FastifyInstance, ds: DataSource): void {
  app.decorateRequest('idempotency', null);

  app.addHook('preHandler', async (request, reply) => {
    const mode = request.routeOptions.config.idempotency;
    if (!mode) return;
    const header = request.headers['idempotency-key'];
    if (header === undefined) {
      if (mode === 'required') throw validationFailed([{ path: 'Idempotency-Key', message: 'this endpoint requires an Idempotency-Key header' }]);
      return;
    }
    if (typeof header !== 'string' || !IDEMPOTENCY_KEY_PATTERN.test(header)) {
      throw validationFailed([{ path: 'Idempotency-Key', message: 'must be 8 to 200 characters of letters, digits, period, underscore, colon or hyphen' }]);
    }
    const credentialId = credentialOf(request);
    // Sorted keys: the same body hashes the same whatever its key order.
    const hash = sha256Hex(`${request.method} ${request.url}\n${canonicalJson(request.body ?? null)}`);
    const claim = await claimIdempotencyKey(ds, credentialId, header, hash);
    switch (claim.kind) {
      case 'claimed':
        request.idempotency = { credentialId, key: header, token: claim.token, requestHash: hash };
        return;
      case 'replay':
        return reply.code(claim.statusCode).header('idempotent-replayed', 'true')
          .type('application/json').send(claim.body);
      case 'in_progress':
        throw new ServiceError('IDEMPOTENCY_IN_PROGRESS', 'a request with this Idempotency-Key is still running; retry shortly', null, { 'retry-after': '1' });
      case 'mismatch': {
        const code = request.routeOptions.config.idempotencyReuseCode ?? 'IDEMPOTENCY_KEY_REUSED';
        throw new ServiceError(code, 'this Idempotency-Key was used for a different request');
      }
    }
  });

  app.addHook('onSend', async (request, reply, payload) => {
    const claim = request.idempotency;
    if (!claim) return payload;
    request.idempotency = null;
    const success = reply.statusCode >= 200 && reply.statusCode < 300;
    if (success && payload instanceof Readable) {
      // A streamed answer (an export) is never stored: it may be hundreds of megabytes, and it would keep story
      // text past a purge. The key stays claimed while it streams (a repeat meanwhile is IDEMPOTENCY_IN_PROGRESS)
      // and is freed when the response ends, complete or cut; a later repeat runs afresh (docs/platform.md).
      reply.raw.once('close', () => void releaseIdempotencyKey(ds, claim).catch((err: Error) => request.log.error({ err }, 'idempotency release failed')));
    } else if (success && (typeof payload === 'string' || payload === undefined || payload === null)) {
      await completeIdempotencyKey(ds, claim, reply.statusCode, (payload as string | null | undefined) ?? '');
    } else {
      await releaseIdempotencyKey(ds, claim);
    }
    return payload;
  });
}
