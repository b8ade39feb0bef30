import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { configureSecretKeys } from '../../runtime/secret-box';
import { LOOP_SCOPES, postSignal } from '../support/customer-loop';
import { Tenant, call, createTenant, endUserToken, errorCode } from '../support/fixtures';
import { ctx } from '../support/root-hooks';

describe('identity merge needs proof of holding the anonymous identity', () => {
  let tenant: Tenant;
  const merge = (t: Tenant, sub: string, payload: Record<string, unknown>) =>
    call({ method: 'POST', url: '/api/v1/identity/merge', headers: { authorization: `Bearer ${endUserToken(t.product, { sub })}` }, payload });
  const proofOf = async (t: Tenant, anonymousId: string): Promise<string> => {
    const res = await call({ method: 'GET', url: '/api/v1/identity/anonymous-proof',
      headers: { authorization: `Bearer ${endUserToken(t.product, { sub: anonymousId })}` } });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().data.anonymousId, anonymousId);
    return res.json().data.anonymousProof;
  };
  const anonymousRows = async (t: Tenant, anonymousId: string) => (await ctx.dataSource.query(
    `SELECT (SELECT count(*) FROM signals WHERE product_id = $1 AND end_user_id = $2)::int AS signals,
            (SELECT count(*) FROM threads WHERE product_id = $1 AND end_user_id = $2)::int AS threads,
            (SELECT count(*) FROM inbox_items WHERE product_id = $1 AND end_user_id = $2)::int AS inbox_items,
            (SELECT count(*) FROM end_users WHERE product_id = $1 AND end_user_id = $2)::int AS end_users`,
    [t.product.id, anonymousId]))[0];
  const newAnonymousId = () => `anon_${randomBytes(12).toString('hex')}`;

  before(async () => {
    tenant = await createTenant(LOOP_SCOPES);
  });

  it('refuses a merge without a valid proof with 403 FORBIDDEN, before anything moves or is looked up', async () => {
    const victim = newAnonymousId();
    await postSignal(tenant, { endUserId: victim });
    const before = await anonymousRows(tenant, victim);
    assert.deepEqual(before, { signals: 1, threads: 1, inbox_items: 0, end_users: 1 });

    const bare = await merge(tenant, 'attacker', { anonymousId: victim });
    assert.equal(bare.statusCode, 403, `knowing the id is not enough: ${bare.body}`);
    assert.equal(errorCode(bare), 'FORBIDDEN');
    assert.match(bare.json().error.message, /anonymousProof/);
    assert.deepEqual(await anonymousRows(tenant, victim), before, 'nothing moved');

    const other = await createTenant(LOOP_SCOPES);
    const attempts: Array<[string, Record<string, unknown>]> = [
      ['the attacker\'s own anonymous proof', { anonymousId: victim, anonymousProof: await proofOf(tenant, newAnonymousId()) }],
      ['the same anonymous id\'s proof in another product', { anonymousId: victim, anonymousProof: await proofOf(other, victim) }],
      ['a made-up proof', { anonymousId: victim, anonymousProof: `anp_${randomBytes(32).toString('base64url')}` }],
      ['the right MAC without its prefix', { anonymousId: victim, anonymousProof: (await proofOf(tenant, victim)).slice(4) }],
    ];
    for (const [name, payload] of attempts) {
      const res = await merge(tenant, 'attacker', payload);
      assert.equal(res.statusCode, 403, `${name}: ${res.body}`);
      assert.equal(errorCode(res), 'FORBIDDEN', name);
    }
    assert.deepEqual(await anonymousRows(tenant, victim), before, 'nothing moved');
    assert.deepEqual(await anonymousRows(tenant, 'attacker'), { signals: 0, threads: 0, inbox_items: 0, end_users: 0 });

    const unknown = await merge(tenant, 'attacker', { anonymousId: newAnonymousId() });
    assert.equal(unknown.statusCode, 403, 'an unknown id without proof is the same refusal: no way to probe which ids exist');
    const unknownWithProof = newAnonymousId();
    assert.equal((await merge(tenant, 'attacker', { anonymousId: unknownWithProof, anonymousProof: await proofOf(tenant, unknownWithProof) })).statusCode, 404);
  });

  it('only an anonymous end user\'s token is answered a proof', async () => {
    const signed = await call({ method: 'GET', url: '/api/v1/identity/anonymous-proof',
      headers: { authorization: `Bearer ${endUserToken(tenant.product, { sub: 'signed-user' })}` } });
    assert.equal(signed.statusCode, 403);
    assert.equal(errorCode(signed), 'FORBIDDEN');
    assert.equal((await call({ method: 'GET', url: '/api/v1/identity/anonymous-proof' })).statusCode, 401);
  });

  it('with the proof the merge moves the history as before; a proof issued before a key rotation still verifies', async () => {
    const anonymousId = newAnonymousId();
    const { threadId } = await postSignal(tenant, { endUserId: anonymousId });
    const proof = await proofOf(tenant, anonymousId);
    assert.match(proof, /^anp_[A-Za-z0-9_-]{43}$/);
    const newKey = randomBytes(32);
    configureSecretKeys({ current: 'rotated', keys: new Map([['rotated', newKey], ...ctx.secretKeys.keys]) });
    try {
      assert.notEqual(await proofOf(tenant, anonymousId), proof, 'a new proof comes from the new key');
      const res = await merge(tenant, 'merged-user', { anonymousId, anonymousProof: proof });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().data.moved.threads, 1);
    } finally {
      configureSecretKeys(ctx.secretKeys);
    }
    assert.deepEqual(await anonymousRows(tenant, anonymousId), { signals: 0, threads: 0, inbox_items: 0, end_users: 0 });
    const [moved] = await ctx.dataSource.query('SELECT end_user_id FROM threads WHERE id = $1', [threadId]);
    assert.equal(moved.end_user_id, 'merged-user');
  });
});
