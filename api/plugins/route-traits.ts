/**
 * Traits a route declares in its config, which the plugins read instead of matching its path
 * (docs/platform.md#route-traits).
 */
import type { FastifyRequest } from 'fastify';

export type Domain = 'platform' | 'customer-loop' | 'proof' | 'webhooks' | 'collection' | 'integrations' | 'ai' | 'rooms';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route's domain: its OpenAPI tag. */
    tag?: Domain;
    /**
     * A customer route (docs/collection.md#customers): errors as `{error, code}` under the customer
     * codes, CORS for the collection page and verified origins, secrets refused in the query string,
     * JSON bodies of 256 KB unless the route declares its own limit.
     */
    customer?: boolean;
    /** The proof key API: bodies of 256 KB at most (docs/platform.md). */
    proofApi?: boolean;
  }
}

/** The whole app's body limit; the proof key API and the customer routes take PROOF_BODY_LIMIT. */
export const BODY_LIMIT = 1024 * 1024;
export const PROOF_BODY_LIMIT = 256 * 1024;

export const CUSTOMER_ROUTE = { customer: true } as const;
export const PROOF_API_ROUTE = { proofApi: true } as const;

/** A customer path: only for requests no route answers (an unknown path, a CORS preflight, a malformed URL). */
export function isCustomerPath(url: string): boolean {
  return url === '/api/proof' || url.startsWith('/api/proof/') || url.startsWith('/api/proof?');
}

/**
 * Whether a request is a customer route's: the trait its route declares (every route of the API
 * declares its tag), or its path when none of them matched.
 */
export function isCustomerRequest(request: FastifyRequest): boolean {
  const config = request.is404 ? undefined : request.routeOptions.config;
  return config?.tag === undefined ? isCustomerPath(request.url) : config.customer === true;
}
