import assert from 'node:assert/strict';
import { FastifyInstance } from 'fastify';
import { string } from 'yup';
import { strictObject } from '../../api/plugins/validation';
import { claimIdempotencyKey, completeIdempotencyKey } from '../../db/platform/idempotency';
import { ServiceError } from '../../runtime/service-error';
import { Tenant, call, createTenant, errorCode, withKey } from '../support/fixtures';
import { ctx } from '../support/root-hooks';

describe('Idempotency-Key on proof writes', () => {
  let tenant: Tenant;
  let app: FastifyInstance;
  let executions = 0;
  let failNext = false;
  let gate: Promise<void> | null = null;

  const send = (key: string | undefined, body: object, url = '/api/v1/proof/things', credential = tenant.key) =>
    call(withKey(credential, {
      method: 'POST', url, payload: body, headers: key === undefined ? {} : { 'idempotency-key': key },
    }), app);

  before(async () => {
    tenant = await createTenant(['service:proof:write']);
    const body = strictObject({ name: string().required() }).required();
    app = await ctx.buildApp({}, (a) => {
      const handler = async (_req: unknown, reply: { code: (n: number) => { send: (b: unknown) => unknown } }) => {
        executions += 1;
        if (gate) await gate;
        if (failNext) {
          failNext = false;
          throw new ServiceError('CONFLICT', 'simulated failure');
        }
        return reply.code(201).send({ data: { execution: executions } });
      };
      a.post('/api/v1/proof/things', { schema: { body }, config: { auth: 'key', idempotency: 'optional' } }, handler);
      a.post('/api/v1/proof/required', { schema: { body }, config: { auth: 'key', idempotency: 'required', idempotencyReuseCode: 'CONFLICT' } }, handler);
      a.post('/api/v1/proof/empty', { schema: { body }, config: { auth: 'key', idempotency: 'optional' } }, async (_req, reply) => {
        executions += 1;
        return reply.code(204).send();
      });
    });
  });

  it('a retry with the same key and body replays the stored response with idempotent-replayed: true', async () => {
    const first = await send('replay-key-0001', { name: 'a' });
    assert.equal(first.statusCode, 201);
    assert.equal(first.headers['idempotent-replayed'], undefined);
    const before = executions;
    const again = await send('replay-key-0001', { name: 'a' });
    assert.equal(again.statusCode, 201);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.deepEqual(again.json(), first.json());
    assert.equal(executions, before, 'the handler did not run again');
  });

  it('the same key with a different body answers 409 IDEMPOTENCY_KEY_REUSED', async () => {
    await send('reuse-key-0001', { name: 'a' });
    const res = await send('reuse-key-0001', { name: 'b' });
    assert.equal(res.statusCode, 409);
    assert.equal(errorCode(res), 'IDEMPOTENCY_KEY_REUSED');
  });

  it('a retry while the first call runs answers 409 IDEMPOTENCY_IN_PROGRESS', async () => {
    let open!: () => void;
    gate = new Promise((resolve) => { open = resolve; });
    const first = send('slow-key-0001', { name: 'a' });
    while (!(await ctx.dataSource.query(`SELECT 1 FROM idempotency_records WHERE idempotency_key = 'slow-key-0001'`)).length) {
      await new Promise((r) => setTimeout(r, 10));
    }
    const second = await send('slow-key-0001', { name: 'a' });
    assert.equal(second.statusCode, 409);
    assert.equal(errorCode(second), 'IDEMPOTENCY_IN_PROGRESS');
    gate = null;
    open();
    assert.equal((await first).statusCode, 201);
    assert.equal((await send('slow-key-0001', { name: 'a' })).headers['idempotent-replayed'], 'true');
  });

  it('only successes are stored: after an error the key is released', async () => {
    failNext = true;
    const failed = await send('error-key-0001', { name: 'a' });
    assert.equal(failed.statusCode, 409);
    const retried = await send('error-key-0001', { name: 'a' });
    assert.equal(retried.statusCode, 201);
    assert.equal(retried.headers['idempotent-replayed'], undefined, 'a real second execution, not a replay');
  });

  it('keys are kept per credential: another key may use the same Idempotency-Key', async () => {
    const other = await createTenant(['service:proof:write']);
    await send('shared-key-0001', { name: 'a' });
    const res = await send('shared-key-0001', { name: 'b' }, '/api/v1/proof/things', other.key);
    assert.equal(res.statusCode, 201);
    assert.equal(res.headers['idempotent-replayed'], undefined);
  });

  it('a record older than 24 hours no longer replays', async () => {
    await send('old-key-00001', { name: 'a' });
    await ctx.dataSource.query(`UPDATE idempotency_records SET expires_at = now() - interval '1 second' WHERE idempotency_key = 'old-key-00001'`);
    const res = await send('old-key-00001', { name: 'b' });
    assert.equal(res.statusCode, 201);
    assert.equal(res.headers['idempotent-replayed'], undefined);
  });

  for (const [why, key] of [['7 characters', 'abcdefg'], ['201 characters', 'a'.repeat(201)], ['a space', 'abc defgh'], ['a slash', 'abc/defgh']]) {
    it(`refuses a key of ${why} with 400`, async () => {
      const res = await send(key, { name: 'a' });
      assert.equal(res.statusCode, 400);
      assert.equal(errorCode(res), 'VALIDATION_FAILED');
    });
  }

  it('accepts 8 and 200 characters of letters, digits and . _ : -', async () => {
    assert.equal((await send('a.b_c:d-', { name: 'a' })).statusCode, 201);
    assert.equal((await send('x'.repeat(200), { name: 'a' })).statusCode, 201);
  });

  it('a route that requires the header refuses a call without it, and answers CONFLICT for a reuse', async () => {
    const missing = await send(undefined, { name: 'a' }, '/api/v1/proof/required');
    assert.equal(missing.statusCode, 400);
    assert.equal(errorCode(missing), 'VALIDATION_FAILED');
    assert.equal((await send('required-0001', { name: 'a' }, '/api/v1/proof/required')).statusCode, 201);
    const reuse = await send('required-0001', { name: 'b' }, '/api/v1/proof/required');
    assert.equal(reuse.statusCode, 409);
    assert.equal(errorCode(reuse), 'CONFLICT');
  });

  it('a success without a body is stored and replayed too', async () => {
    const first = await send('empty-key-0001', { name: 'a' }, '/api/v1/proof/empty');
    assert.equal(first.statusCode, 204);
    const before = executions;
    const again = await send('empty-key-0001', { name: 'a' }, '/api/v1/proof/empty');
    assert.equal(again.statusCode, 204);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(executions, before);
  });

  it('the same key on another path is a different request', async () => {
    await send('path-key-0001', { name: 'a' });
    const res = await send('path-key-0001', { name: 'a' }, '/api/v1/proof/empty');
    assert.equal(res.statusCode, 409);
    assert.equal(errorCode(res), 'IDEMPOTENCY_KEY_REUSED');
  });

  it('a late first call cannot complete a claim that a later call took over', async () => {
    const first = await claimIdempotencyKey(ctx.dataSource, 'cred-late', 'late-key-0001', 'hash-a');
    assert.equal(first.kind, 'claimed');
    await ctx.dataSource.query(`UPDATE idempotency_records SET locked_until = now() - interval '1 second' WHERE idempotency_key = 'late-key-0001'`);
    const second = await claimIdempotencyKey(ctx.dataSource, 'cred-late', 'late-key-0001', 'hash-b');
    assert.equal(second.kind, 'claimed', 'an abandoned claim is taken over');
    if (first.kind !== 'claimed') return;
    await completeIdempotencyKey(ctx.dataSource, { credentialId: 'cred-late', key: 'late-key-0001', token: first.token }, 201, '{"late":true}');
    const [row] = await ctx.dataSource.query(`SELECT state, response_body FROM idempotency_records WHERE idempotency_key = 'late-key-0001'`);
    assert.deepEqual([row.state, row.response_body], ['in_progress', null]);
  });

  it('concurrent duplicates execute once', async () => {
    const before = executions;
    const results = await Promise.all(Array.from({ length: 8 }, () => send('race-key-0001', { name: 'a' })));
    const created = results.filter((r) => r.statusCode === 201);
    const busy = results.filter((r) => r.statusCode === 409);
    assert.equal(created.length + busy.length, 8);
    assert.equal(executions - before, 1);
    for (const r of busy) assert.equal(errorCode(r), 'IDEMPOTENCY_IN_PROGRESS');
  });
});
