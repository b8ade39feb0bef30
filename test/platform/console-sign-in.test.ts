import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { FastifyInstance } from 'fastify';
import { createTeammate } from '../../db/platform/tenancy';
import { sha256Hex } from '../../db/rules/secrets';
import { Tenant, call, createTenant, errorCode, withKey, withinOneMinuteWindow } from '../support/fixtures';
import { mailedSignInToken } from '../support/console';
import { ctx } from '../support/root-hooks';

const address = (tag: string) => `${tag}-${randomBytes(5).toString('hex')}@team.example`;
// Every test client is 127.0.0.1, which shares one per-address window across the suite: the default app here
// lifts that limit (the per-address test uses its own addresses), and the per-e-mail limit stays.
let relaxed: FastifyInstance;
const complete = (token: string | undefined, app: FastifyInstance = relaxed, headers: Record<string, string> = {}) =>
  call({ method: 'POST', url: '/api/workspace/sign-in/complete', headers: { ...(token ? { 'x-sign-in-token': token } : {}), ...headers } }, app);
const askLink = (email: string, app: FastifyInstance = relaxed, headers: Record<string, string> = {}) =>
  call({ method: 'POST', url: '/api/workspace/sign-in', payload: { email }, headers }, app);

describe('console sign-in by e-mail link (PAGES.md §5)', function () {
  this.timeout(90_000);
  let tenant: Tenant;

  before(async () => {
    tenant = await createTenant();
    relaxed = await ctx.buildApp({ signInPerAddressPerMinute: 100_000 });
  });

  it('mails a known teammate a single-use link; completing it sets the session cookie and answers the CSRF token', async () => {
    const email = address('ada');
    const teammate = await createTeammate(ctx.dataSource, { organizationId: tenant.organizationId, email, role: 'admin' });
    const asked = await askLink(email.toUpperCase());
    assert.equal(asked.statusCode, 202);
    assert.deepEqual(asked.json(), { data: { accepted: true } });
    const token = await mailedSignInToken(email);
    const [mail] = ctx.smtpSink.to(email);
    assert.doesNotMatch(mail.subject, /sl_/);
    const rows: Array<{ token_digest: string }> = await ctx.dataSource.query(
      'SELECT token_digest FROM teammate_sign_in_links WHERE teammate_id = $1', [teammate.id]);
    assert.deepEqual(rows.map((r) => r.token_digest), [sha256Hex(token)], 'only the digest is stored');

    const done = await complete(token);
    assert.equal(done.statusCode, 201);
    const setCookie = String(done.headers['set-cookie']);
    assert.match(setCookie, /^sv_session=svs_[A-Za-z0-9_-]{43};/);
    assert.match(setCookie, /HttpOnly/);
    assert.match(setCookie, /SameSite=Lax/);
    assert.doesNotMatch(setCookie, /Secure/, 'plain http: no Secure flag');
    assert.equal(done.headers['cache-control'], 'no-store');
    const body = done.json().data;
    assert.deepEqual({ ...body, csrfToken: undefined, expiresAt: undefined },
      { teammateId: teammate.id, organizationId: tenant.organizationId, email, role: 'admin', csrfToken: undefined, expiresAt: undefined });
    const cookie = setCookie.split(';')[0];
    const session = await call({ method: 'GET', url: '/api/workspace/session', headers: { cookie } });
    assert.equal(session.statusCode, 200);
    assert.equal(session.json().data.csrfToken, body.csrfToken, 'the console reads the CSRF token again after a reload');

    const again = await complete(token);
    assert.equal(again.statusCode, 409);
    assert.equal(errorCode(again), 'ALREADY_USED');
  });

  it('answers 202 for an unknown address and writes nothing (no account enumeration)', async () => {
    const email = address('nobody');
    const res = await askLink(email);
    assert.equal(res.statusCode, 202);
    assert.deepEqual(res.json(), { data: { accepted: true } });
    const [{ links }] = await ctx.dataSource.query(
      'SELECT count(*)::int AS links FROM teammate_sign_in_links l JOIN teammates t ON t.id = l.teammate_id WHERE t.email = $1', [email]);
    assert.equal(links, 0);
  });

  it('without SMTP answers the same 202 but makes and queues nothing (no mail could go)', async () => {
    const noMail = await ctx.buildApp({ signInPerAddressPerMinute: 100_000, smtpUrl: undefined });
    try {
      const email = address('no-smtp');
      await createTeammate(ctx.dataSource, { organizationId: tenant.organizationId, email, role: 'member' });
      const res = await askLink(email, noMail);
      assert.equal(res.statusCode, 202);
      assert.deepEqual(res.json(), { data: { accepted: true } });
      const [{ links }] = await ctx.dataSource.query(
        'SELECT count(*)::int AS links FROM teammate_sign_in_links l JOIN teammates t ON t.id = l.teammate_id WHERE t.email = $1', [email]);
      assert.equal(links, 0);
    } finally {
      await noMail.close();
    }
  });

  it('refuses a missing, malformed or unknown secret with 401, an expired link with 410, a bad address with 400', async () => {
    for (const token of [undefined, 'sl_short', `ct_${'a'.repeat(43)}`, `sl_${'a'.repeat(43)}`]) {
      const res = await complete(token);
      assert.equal(res.statusCode, 401, String(token));
      assert.equal(errorCode(res), 'INVALID_API_KEY');
    }
    const email = address('late');
    const teammate = await createTeammate(ctx.dataSource, { organizationId: tenant.organizationId, email, role: 'member' });
    await askLink(email);
    const token = await mailedSignInToken(email);
    await ctx.dataSource.query(`UPDATE teammate_sign_in_links SET expires_at = now() - interval '1 second' WHERE teammate_id = $1`, [teammate.id]);
    const expired = await complete(token);
    assert.equal(expired.statusCode, 410);
    assert.equal(errorCode(expired), 'EXPIRED');
    for (const email of ['not-an-address', 'a'.repeat(320) + '@x.example']) {
      const res = await askLink(email);
      assert.equal(res.statusCode, 400, email);
      assert.equal(errorCode(res), 'VALIDATION_FAILED');
    }
  });

  it('limits requests per e-mail address and per client address, with retry-after', async () => {
    await withinOneMinuteWindow(10);
    const email = address('burst');
    for (let i = 0; i < ctx.config.signInPerEmailPerMinute; i += 1) assert.equal((await askLink(email)).statusCode, 202);
    const limited = await askLink(email.toUpperCase());
    assert.equal(limited.statusCode, 429);
    assert.equal(errorCode(limited), 'RATE_LIMITED');
    assert.ok(Number(limited.headers['retry-after']) >= 1);

    const app = await ctx.buildApp({ trustProxy: true, signInPerAddressPerMinute: 2 });
    const client = { 'x-forwarded-for': `203.0.113.${1 + Math.floor(Math.random() * 250)}` };
    await withinOneMinuteWindow(10);
    assert.equal((await askLink(address('a'), app, client)).statusCode, 202);
    assert.equal((await complete(`sl_${'b'.repeat(43)}`, app, client)).statusCode, 401);
    const third = await askLink(address('c'), app, client);
    assert.equal(third.statusCode, 429, 'asking and completing share the per-address window');
    assert.equal((await complete(`sl_${'b'.repeat(43)}`, app, client)).statusCode, 429);
  });

  it('sets a Secure cookie when the request came over https', async () => {
    const app = await ctx.buildApp({ trustProxy: true, signInPerAddressPerMinute: 100_000 });
    const email = address('tls');
    await createTeammate(ctx.dataSource, { organizationId: tenant.organizationId, email, role: 'owner' });
    await askLink(email, app);
    const token = await mailedSignInToken(email);
    const done = await complete(token, app, { 'x-forwarded-proto': 'https' });
    assert.equal(done.statusCode, 201);
    assert.match(String(done.headers['set-cookie']), /; Secure/);
  });

  it('sign-out ends the session and clears the cookie; it needs the CSRF token; a key is FORBIDDEN', async () => {
    const email = address('bye');
    await createTeammate(ctx.dataSource, { organizationId: tenant.organizationId, email, role: 'member' });
    await askLink(email);
    const done = await complete(await mailedSignInToken(email));
    const cookie = String(done.headers['set-cookie']).split(';')[0];
    const csrf = done.json().data.csrfToken as string;
    const noCsrf = await call({ method: 'POST', url: '/api/workspace/sign-out', headers: { cookie } });
    assert.equal(noCsrf.statusCode, 403);
    assert.equal(errorCode(noCsrf), 'FORBIDDEN');
    const key = await call(withKey(tenant.key, { method: 'POST', url: '/api/workspace/sign-out' }));
    assert.equal(key.statusCode, 403);
    const out = await call({ method: 'POST', url: '/api/workspace/sign-out', headers: { cookie, 'x-csrf-token': csrf } });
    assert.equal(out.statusCode, 204);
    assert.match(String(out.headers['set-cookie']), /^sv_session=;.*Expires=Thu, 01 Jan 1970/);
    const after = await call({ method: 'GET', url: '/api/workspace/session', headers: { cookie } });
    assert.equal(after.statusCode, 401);
  });
});
