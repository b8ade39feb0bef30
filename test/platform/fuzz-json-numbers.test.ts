import assert from 'node:assert/strict';
import { InjectOptions, LightMyRequestResponse } from 'fastify';
import { createServiceKey } from '../../db/platform/service-keys';
import { Tenant, createTenant, endUserToken } from '../support/fixtures';
import { ctx } from '../support/root-hooks';

type Operation = { security?: Array<Record<string, string[]>>; requestBody?: { content: Record<string, unknown> } };

/** JSON numbers that are no double: JSON.parse makes ±Infinity of them. */
const NOT_FINITE: Array<[string, string]> = [
  ['1e400', '{"x":1e400}'],
  ['-1e400', '{"x":-1e400,"idempotencyKey":"fuzz-12345678"}'],
  ['a number of 100,000 digits', `{"x":${'9'.repeat(100_000)}}`],
];

const isCustomerPath = (url: string) => url === '/api/proof' || url.startsWith('/api/proof/');

/** The envelope of the route's family: `{error, code}` under /api/proof, `{error: {code, message, requestId, details}}` elsewhere. */
function envelopeProblem(url: string, res: LightMyRequestResponse): string | null {
  const type = String(res.headers['content-type'] ?? '');
  if (type.startsWith('text/html')) return /data-code="[A-Z_]+"/.test(res.body) ? null : 'an HTML refusal without data-code';
  if (!type.startsWith('application/json')) return `answered ${type || 'no content type'}`;
  const body = res.json();
  if (isCustomerPath(url)) {
    const ok = typeof body.error === 'string' && typeof body.code === 'string' && Object.keys(body).length === 2;
    return ok ? null : `not {error, code}: ${res.body.slice(0, 200)}`;
  }
  const e = body.error;
  const ok = e && typeof e.code === 'string' && typeof e.message === 'string' && typeof e.requestId === 'string' && 'details' in e;
  return ok ? null : `not the error envelope: ${res.body.slice(0, 200)}`;
}

describe('fuzz: a JSON number that is not finite, on every route of the OpenAPI document', function () {
  this.timeout(120_000);
  let tenant: Tenant;
  const keys = new Map<string, string>();

  before(async () => {
    tenant = await createTenant(['service:proof:read']);
  });

  /** A key of the tenant's product holding `scope`, made once per scope. */
  async function keyWith(scope: string): Promise<string> {
    if (!keys.has(scope)) {
      const issued = await createServiceKey(ctx.dataSource, {
        organizationId: tenant.organizationId, productId: tenant.product.id, environment: 'production', scopes: [scope],
      });
      keys.set(scope, issued.secret);
    }
    return keys.get(scope)!;
  }

  /** The credential the operation documents first: a key with its scope, a fresh end-user token, or the owner's session. */
  async function credential(op: Operation): Promise<Record<string, string> | null> {
    const first = op.security?.[0];
    if (!first) return null;
    if ('serviceKey' in first) return { authorization: `Bearer ${await keyWith(first.serviceKey[0] ?? 'service:proof:read')}` };
    if ('endUserToken' in first) return { authorization: `Bearer ${endUserToken(tenant.product)}` };
    return { cookie: tenant.owner.cookie, 'x-csrf-token': tenant.owner.csrfToken };
  }

  it('never answers 5xx; answers in the route\'s envelope; a body the JSON parser reads is refused with 400', async () => {
    // Refusals of garbage from every route, some undocumented for routes no test sends garbage to: this app's
    // answers are checked here, not held to the document.
    const app = await ctx.buildApp({}, undefined, { checkAnswers: false });
    const paths = app.openapiDocument().paths as Record<string, Record<string, Operation>>;
    const problems: string[] = [];
    let refusedAtParse = 0;
    for (const [template, ops] of Object.entries(paths)) {
      const url = template.replace(/\{[^}]+\}/g, 'fuzz0000000000');
      for (const [method, op] of Object.entries(ops)) {
        const bodyless = method === 'get' || method === 'head';
        const readsJson = !op.requestBody || 'application/json' in op.requestBody.content;
        for (const [what, payload] of NOT_FINITE) {
          // A body-less method is never parsed, so no credential is needed to show it ignores the body (and none opens a stream).
          // An end-user token is good for one write: one per request.
          const auth = bodyless ? null : await credential(op);
          const res = await app.inject({
            method: method.toUpperCase() as InjectOptions['method'], url, payload,
            headers: { 'content-type': 'application/json', 'idempotency-key': 'fuzz-12345678', ...auth },
          });
          const name = `${method.toUpperCase()} ${template} with ${what}`;
          if (res.statusCode >= 500) problems.push(`${name}: ${res.statusCode} ${res.body.slice(0, 200)}`);
          if (res.statusCode >= 400) {
            const problem = envelopeProblem(url, res);
            if (problem) problems.push(`${name}: ${problem}`);
          }
          // With its credential accepted, a route that reads JSON reaches the parser, which refuses the body.
          if (auth && readsJson) {
            if (res.statusCode !== 400) problems.push(`${name}: ${res.statusCode}, not 400 (${res.body.slice(0, 200)})`);
            else refusedAtParse++;
          }
        }
      }
    }
    assert.deepEqual(problems, []);
    assert.ok(refusedAtParse > 150, `only ${refusedAtParse} answers came from the parser`);
  });

  it('the fuzzer\'s findings: revoke, publish and summarize answer 400 VALIDATION_FAILED naming the overflow', async () => {
    const publish = await keyWith('service:proof:publish');
    const write = await keyWith('service:proof:write');
    for (const [url, key] of [
      ['/api/v1/proof/consents/cns_fuzz0000000000/revoke', write],
      ['/api/v1/proof/placements/plc_fuzz0000000000/publish', publish],
      ['/api/v1/proof/items/prf_fuzz0000000000/summarize', write],
    ]) {
      for (const [what, payload] of NOT_FINITE) {
        const res = await ctx.app.inject({
          method: 'POST', url, payload, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': 'fuzz-12345678' },
        });
        assert.equal(res.statusCode, 400, `${url} with ${what}: ${res.body}`);
        assert.equal(res.json().error.code, 'VALIDATION_FAILED');
        assert.match(res.json().error.details[0].message, /finite/);
      }
    }
  });
});
