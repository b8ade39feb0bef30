import fastifyCors, { FastifyCorsOptions } from '@fastify/cors';
import { FastifyInstance, FastifyRequest } from 'fastify';
import { DataSource } from 'typeorm';
import { customerOriginAllowed } from '../../db/collection/domains';
import { Config } from '../../runtime/config';
import { ServiceError } from '../../runtime/service-error';
import { isCustomerPath } from './errors';

/** What a customer page sends and reads across origins; never cookies (credentials stay off). */
const ALLOWED_HEADERS = [
  'content-type', 'range', 'authorization', 'x-draft-session', 'x-link-token', 'x-control-token', 'x-upload-token',
  'x-interview-token', 'x-part-sha256', 'x-request-id',
];
const EXPOSED_HEADERS = [
  'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'retry-after', 'content-range', 'accept-ranges', 'x-request-id',
];

/**
 * CORS for the customer routes only (`/api/proof/*`, COLLECTION.md §1), through @fastify/cors: the
 * collection page's origin, verified domains and live flows' `allowedOrigins` get the headers; other
 * routes never send them. A preflight from any other origin is 403 FORBIDDEN, so a browser sends no
 * header-carrying request from there; a simple request from there goes on without CORS headers, and the
 * browser keeps its answer from the page (the no-JS form still posts).
 */
export async function registerCustomerCors(app: FastifyInstance, ds: DataSource, config: Config): Promise<void> {
  const pageOrigin = new URL(config.collectPageUrl).origin;
  const delegator = async (request: FastifyRequest): Promise<FastifyCorsOptions> => {
    const origin = request.headers.origin;
    if (!isCustomerPath(request.url) || typeof origin !== 'string') return { origin: false };
    if (origin === pageOrigin || await customerOriginAllowed(ds, origin)) {
      return {
        origin, credentials: false, methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
        allowedHeaders: ALLOWED_HEADERS, exposedHeaders: EXPOSED_HEADERS, maxAge: 600, strictPreflight: false,
      };
    }
    if (request.method === 'OPTIONS') throw new ServiceError('FORBIDDEN', 403, `the origin ${origin.slice(0, 200)} may not call this route`);
    return { origin: false };
  };
  await app.register(fastifyCors, { delegator });
}
