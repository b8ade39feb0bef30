import assert from 'node:assert/strict';
import { Client, Connection } from '@temporalio/client';
import { buildApp } from '../../api/app';
import { createDataSource } from '../../db/data-source';
import { call } from '../support/fixtures';
import { ctx } from '../support/root-hooks';

describe('health', () => {
  it('/readyz answers 200 when PostgreSQL and Temporal answer; /healthz is liveness', async () => {
    const res = await call({ method: 'GET', url: '/readyz' });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json().data.checks, { database: 'ok', temporal: 'ok' });
    assert.deepEqual((await call({ method: 'GET', url: '/healthz' })).json(), { data: { status: 'ok' } });
  });

  it('/readyz answers 503 naming the dependency that does not answer, while /healthz stays 200', async function () {
    this.timeout(20_000);
    // Left open: the SDK may still hold a retry timer for it, and closing under it throws later.
    const deadTemporal = Connection.lazy({ address: '127.0.0.1:1', connectTimeout: 500 });
    const deadDatabase = createDataSource('postgres://postgres@127.0.0.1:1/none');
    const cases = [
      { deps: { dataSource: ctx.dataSource, temporal: new Client({ connection: deadTemporal }) }, failed: 'temporal' },
      { deps: { dataSource: deadDatabase, temporal: ctx.temporal }, failed: 'database' },
    ];
    for (const { deps, failed } of cases) {
      const app = await buildApp({ ...deps, config: ctx.config });
      const res = await app.inject({ method: 'GET', url: '/readyz' });
      const live = await app.inject({ method: 'GET', url: '/healthz' });
      await app.close();
      assert.equal(live.statusCode, 200);
      assert.equal(res.statusCode, 503);
      assert.equal(res.json().error.code, 'SERVICE_UNAVAILABLE');
      assert.equal(res.json().error.details[failed], 'failed');
      assert.match(res.json().error.message, new RegExp(failed));
    }
  });

  it('/readyz answers 503 draining once the process is stopping, with retry-after', async () => {
    const app = await ctx.buildApp();
    app.draining = true;
    const res = await app.inject({ method: 'GET', url: '/readyz' });
    assert.equal(res.statusCode, 503);
    assert.equal(res.json().error.details.draining, true);
    assert.equal(res.headers['retry-after'], '1');
    assert.equal((await app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
  });
});

describe('OpenAPI document', () => {
  it('is generated from the same schemas that validate requests', async () => {
    const res = await call({ method: 'GET', url: '/openapi.json' });
    assert.equal(res.statusCode, 200);
    const doc = res.json();
    assert.equal(doc.openapi, '3.1.0');
    const create = doc.paths['/api/workspace/keys'].post;
    const schema = create.requestBody.content['application/json'].schema;
    assert.equal(schema.additionalProperties, false);
    assert.deepEqual(schema.required.sort(), ['environment', 'productId', 'scopes']);
    assert.equal(schema.properties.scopes.maxItems, 5);
    assert.equal(schema.properties.expiresInDays.type, 'integer');
    assert.equal(schema.properties.expiresInDays.maximum, 365);
    assert.ok(schema.properties.scopes.items.enum.includes('service:proof:read'));
    const list = doc.paths['/api/workspace/keys'].get;
    const limit = list.parameters.find((p: { name: string }) => p.name === 'limit');
    assert.deepEqual({ min: limit.schema.minimum, max: limit.schema.maximum, def: limit.schema.default }, { min: 1, max: 100, def: 50 });
    assert.deepEqual(doc.paths['/api/v1/auth/whoami'].get.security, [{ serviceKey: [] }]);
    assert.ok(doc.paths['/api/workspace/keys/{id}/rotate'].post);
    assert.equal(doc.paths['/openapi.json'], undefined, 'the document does not describe itself');
  });

  it('serves a docs page with its assets', async () => {
    const page = await call({ method: 'GET', url: '/docs' });
    assert.equal(page.statusCode, 200);
    assert.match(page.headers['content-type'] as string, /text\/html/);
    assert.match(page.body, /openapi\.json/);
    const asset = await call({ method: 'GET', url: '/docs/assets/swagger-ui-bundle.js' });
    assert.equal(asset.statusCode, 200);
    assert.equal((await call({ method: 'GET', url: '/docs/assets/..%2Fpackage.json' })).statusCode, 404);
  });
});
