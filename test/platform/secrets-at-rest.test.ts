import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { resealStoredSecrets } from '../../db/platform/secrets-at-rest';
import { activeSigningKey } from '../../db/proof/proof-signing';
import { createEndpoint } from '../../db/webhooks/webhook-endpoints';
import { WebhookEndpoint } from '../../db/entities';
import { configureSecretKeys, openSecret, parseKeyRing, sealSecret } from '../../runtime/secret-box';
import { call, createTenant, endUserToken } from '../support/fixtures';
import { ctx } from '../support/root-hooks';

const SEALED = /^sv1:[A-Za-z0-9_-]+:[A-Za-z0-9_-]+:[A-Za-z0-9_-]*:[A-Za-z0-9_-]+$/;

describe('secrets at rest: AES-256-GCM under a key-encryption key', () => {
  it('webhook secrets, identity secrets and signing keys are stored sealed, never in the clear', async () => {
    const tenant = await createTenant();
    const { endpoint, secret } = await createEndpoint(ctx.dataSource, tenant.organizationId, { url: 'https://example.com/h', subscriptions: ['*'] });
    const [stored] = await ctx.dataSource.query('SELECT secret FROM webhook_endpoints WHERE id = $1', [endpoint.id]);
    assert.match(stored.secret, SEALED);
    assert.ok(!stored.secret.includes(secret));
    assert.equal(openSecret(stored.secret), secret);
    const [product] = await ctx.dataSource.query('SELECT identity_secret FROM products WHERE id = $1', [tenant.product.id]);
    assert.match(product.identity_secret, SEALED);
    assert.equal(openSecret(product.identity_secret), tenant.product.identitySecret);
    await activeSigningKey(ctx.dataSource);
    const keys: Array<{ private_key_pem: string }> = await ctx.dataSource.query('SELECT private_key_pem FROM proof_signing_keys');
    for (const k of keys) assert.match(k.private_key_pem, SEALED);
  });

  it('an end-user token signed with the identity secret still verifies (the secret is opened on read)', async () => {
    const tenant = await createTenant(['service:signals:write']);
    const res = await call({ method: 'GET', url: '/api/v1/inbox', headers: { authorization: `Bearer ${endUserToken(tenant.product)}` } });
    assert.equal(res.statusCode, 200, res.body);
  });

  it('plaintext rows from before are sealed at start, and keep working', async () => {
    const tenant = await createTenant();
    const { endpoint, secret } = await createEndpoint(ctx.dataSource, tenant.organizationId, { url: 'https://example.com/p', subscriptions: ['*'] });
    await ctx.dataSource.query('UPDATE webhook_endpoints SET secret = $2 WHERE id = $1', [endpoint.id, secret]);
    assert.equal((await ctx.dataSource.getRepository(WebhookEndpoint).findOneByOrFail({ id: endpoint.id })).secret, secret, 'plaintext still reads');
    assert.ok(await resealStoredSecrets(ctx.dataSource) >= 1);
    const [stored] = await ctx.dataSource.query('SELECT secret FROM webhook_endpoints WHERE id = $1', [endpoint.id]);
    assert.match(stored.secret, SEALED);
    assert.equal((await ctx.dataSource.getRepository(WebhookEndpoint).findOneByOrFail({ id: endpoint.id })).secret, secret);
  });

  it('rotation: a new first key seals, values under the old one still open, and a reseal moves them', async () => {
    const old = `old:${randomBytes(32).toString('base64')}`;
    const fresh = `new:${randomBytes(32).toString('base64')}`;
    configureSecretKeys(parseKeyRing(old));
    const sealed = sealSecret('whsec_rotating');
    configureSecretKeys(parseKeyRing(`${fresh},${old}`));
    try {
      assert.equal(openSecret(sealed), 'whsec_rotating');
      assert.match(sealSecret('x'), /^sv1:new:/);
      configureSecretKeys(parseKeyRing(fresh));
      assert.throws(() => openSecret(sealed), /does not hold/);
      const tampered = sealSecret('abc').replace(/:([A-Za-z0-9_-])([A-Za-z0-9_-]*)$/, (_m, a: string, b: string) => `:${a === 'A' ? 'B' : 'A'}${b}`);
      assert.throws(() => openSecret(tampered));
    } finally {
      configureSecretKeys(ctx.secretKeys);
    }
  });

  it('SV_SECRET_KEYS refuses keys that are not 32 bytes', () => {
    assert.throws(() => parseKeyRing('k:abcd'), /32-byte/);
    assert.throws(() => parseKeyRing(''), /names no key/);
  });
});
