import assert from 'node:assert/strict';
import path from 'node:path';
import { call, errorCode, withKey } from '../support/fixtures';
import { ctx } from '../support/root-hooks';
import { runCommand } from '../support/role-processes';

const SV = path.join(__dirname, '..', '..', 'bin', 'sv.js');

/** `sv` with the suite's variables on the suite's database, from another folder (it must not depend on the working directory). */
const sv = (...args: string[]) => runCommand([process.execPath, SV, ...args], { DATABASE_URL: ctx.databaseUrl }, { cwd: '/', inherit: true });

async function json(...args: string[]) {
  const res = await sv(...args, '--json');
  assert.equal(res.code, 0, res.stderr);
  return JSON.parse(res.stdout);
}

describe('sv operator CLI', function () {
  // Each sv call is a fresh Node process compiling TypeScript; a busy machine makes a dozen of them slow.
  this.timeout(180_000);

  it('provisions an organization, product, teammate, session and key, and the key works against whoami', async () => {
    const org = await json('org', 'create', '--name', 'CLI Co', '--sponsored');
    assert.equal(org.sponsored, true);
    const product = await json('product', 'create', '--org', org.id, '--name', 'CLI App');
    assert.deepEqual(product.environments, ['development', 'production', 'staging']);
    assert.equal(product.identitySecret, undefined, 'the identity secret has its own command');
    const teammate = await json('teammate', 'create', '--org', org.id, '--email', 'ops@example.com', '--role', 'owner');
    const session = await json('session', 'create', '--teammate', teammate.id);
    assert.deepEqual(Object.keys(session).sort(), ['cookie', 'csrfToken', 'expiresAt']);
    assert.match(session.cookie, /^sv_session=svs_[A-Za-z0-9_-]{43}$/);
    const sessionRes = await call({ method: 'GET', url: '/api/workspace/session', headers: { cookie: session.cookie } });
    assert.equal(sessionRes.json().data.teammateId, teammate.id);
    const link = await json('teammate', 'sign-in-link', '--teammate', teammate.id);
    const token = /\/console\/sign-in#(sl_[A-Za-z0-9_-]{43})$/.exec(link.url)?.[1];
    assert.ok(token, link.url);
    // Every test client is 127.0.0.1: an app without the shared per-address sign-in limit.
    const relaxed = await ctx.buildApp({ signInPerAddressPerMinute: 100_000 });
    const signedIn = await call({ method: 'POST', url: '/api/workspace/sign-in/complete', headers: { 'x-sign-in-token': token } }, relaxed);
    assert.equal(signedIn.json().data.teammateId, teammate.id, 'the printed link signs the teammate in, without e-mail');

    const issued = await json('key', 'create', '--org', org.id, '--product', product.id, '--env', 'production',
      '--scopes', 'proof:read,service:signals:read', '--expires-days', '30');
    assert.deepEqual(issued.key.scopes, ['service:proof:read', 'service:signals:read']);
    const who = await call(withKey(issued.secret, { method: 'GET', url: '/api/v1/auth/whoami' }));
    assert.equal(who.statusCode, 200);
    assert.equal(who.json().data.organizationId, org.id);

    const listed = await json('key', 'list', '--org', org.id);
    assert.equal(listed.data.length, 1);
    assert.ok(!JSON.stringify(listed).includes(issued.secret));

    const rotated = await json('key', 'rotate', issued.key.id);
    assert.equal((await call(withKey(issued.secret, { method: 'GET', url: '/api/v1/auth/whoami' }))).statusCode, 401);
    assert.equal((await call(withKey(rotated.secret, { method: 'GET', url: '/api/v1/auth/whoami' }))).statusCode, 200);
    await json('key', 'revoke', rotated.key.id);
    assert.equal(errorCode(await call(withKey(rotated.secret, { method: 'GET', url: '/api/v1/auth/whoami' }))), 'INVALID_API_KEY');

    const identity = await json('identity-secret', '--product', product.id);
    assert.equal(identity.algorithm, 'HS256');
    const minted = await json('identity-token', '--product', product.id, '--sub', 'user-42');
    const install = await call({ method: 'GET', url: '/api/v1/installation', headers: { authorization: `Bearer ${minted.token}` } });
    assert.equal(install.json().data.endUserId, 'user-42');

    const { kid } = await json('signing-key', 'rotate');
    const keys = (await call({ method: 'GET', url: '/api/public/proof/receipts/keys' })).json().keys;
    assert.equal(keys[0].kid, kid);
    assert.ok(keys.slice(1).every((k: { status: string }) => k.status === 'retired'));
  });

  const failures: Array<[string, string[], number, RegExp]> = [
    ['an unknown command', ['frob'], 2, /unknown command/],
    ['a missing option value', ['key', 'create', '--org'], 2, /argument missing/],
    ['an unknown option', ['org', 'create', '--name', 'x', '--colour', 'red'], 2, /Unknown option/],
    ['a missing required option', ['product', 'create', '--name', 'x'], 2, /--org is required/],
    ['an unknown organization', ['product', 'create', '--org', 'org_nope', '--name', 'x'], 1, /NOT_FOUND/],
    ['a sign-in link for an unknown teammate', ['teammate', 'sign-in-link', '--teammate', 'tm_nope'], 1, /NOT_FOUND/],
    ['a bad role', ['teammate', 'create', '--org', 'org_nope', '--email', 'a@b.co', '--role', 'king'], 1, /VALIDATION_FAILED/],
    ['a word for a number', ['key', 'create', '--org', 'x', '--env', 'production', '--scopes', 'proof:read', '--expires-days', 'ten'], 2, /whole number/],
  ];
  for (const [name, args, code, message] of failures) {
    it(`answers ${name} with one line and exit ${code}, no stack trace`, async () => {
      const res = await sv(...args);
      assert.equal(res.code, code);
      assert.match(res.stderr, message);
      assert.equal(res.stderr.trim().split('\n').length, 1, res.stderr);
      assert.doesNotMatch(res.stderr, /\n\s+at /);
    });
  }

  it('refuses a key for a workspace that is not sponsored', async () => {
    const org = await json('org', 'create', '--name', 'Plain');
    const res = await sv('key', 'create', '--org', org.id, '--env', 'production', '--scopes', 'proof:read');
    assert.equal(res.code, 1);
    assert.match(res.stderr, /FORBIDDEN.*sponsored/);
  });
});
