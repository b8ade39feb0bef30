import assert from 'node:assert/strict';
import { FastifyInstance } from 'fastify';
import { IntakeLimit, OutboxEvent, Signal, Thread, ThreadMessage } from '../../db/entities';
import { secondsToNextUtcDay } from '../../db/rules/date-time';
import { LOOP_SCOPES, signalBody } from '../support/customer-loop';
import { Tenant, call, createTenant, errorCode, eventually, withKey } from '../support/fixtures';
import { ctx } from '../support/root-hooks';

const SCOPES = LOOP_SCOPES;
let counter = 0;

describe('customer loop: signal intake', () => {
  let tenant: Tenant;
  const post = (payload: unknown, t: Tenant = tenant) =>
    call(withKey(t.key, { method: 'POST', url: '/api/v1/signals', payload: payload as object }));
  const get = (url: string, t: Tenant = tenant) => call(withKey(t.key, { method: 'GET', url }));

  before(async () => {
    tenant = await createTenant(SCOPES);
  });

  it('stores the signal, its end user, a thread with the body as first customer message, and signal.created', async () => {
    const res = await post(signalBody({ email: 'ada@example.com', name: 'Ada', kind: 'bug', context: { plan: 'pro' } }));
    assert.equal(res.statusCode, 201, res.body);
    const receipt = res.json().data;
    assert.deepEqual(Object.keys(receipt).sort(), ['id', 'replayed', 'state', 'threadId']);
    assert.equal(receipt.replayed, false);
    assert.equal(receipt.state, 'open');
    const signal = await ctx.dataSource.getRepository(Signal).findOneByOrFail({ id: receipt.id });
    assert.equal(signal.category, 'bug');
    assert.deepEqual(signal.context, { plan: 'pro' });
    const thread = await ctx.dataSource.getRepository(Thread).findOneByOrFail({ id: receipt.threadId });
    assert.equal(thread.subject, 'Export is slow');
    const messages = await ctx.dataSource.getRepository(ThreadMessage).findBy({ threadId: thread.id });
    assert.equal(messages.length, 1);
    assert.equal(messages[0].visibility, 'customer');
    assert.equal(messages[0].body, 'Exports take minutes for big projects.');
    const events = await ctx.dataSource.getRepository(OutboxEvent).findBy({ eventType: 'signal.created', organizationId: tenant.organizationId });
    assert.ok(events.some((e) => e.payload.signalId === receipt.id));
    const users: Array<{ email: string; name: string }> = await ctx.dataSource.query(
      'SELECT email, name FROM end_users WHERE product_id = $1 AND end_user_id = $2', [tenant.product.id, 'user-1']);
    assert.deepEqual(users, [{ email: 'ada@example.com', name: 'Ada' }]);
  });

  it('a later signal keeps what it does not name of its end user, changes what it does, and writes nothing when nothing changes', async () => {
    const t = await createTenant(SCOPES);
    const user = async () => (await ctx.dataSource.query(
      'SELECT email, name, updated_at FROM end_users WHERE product_id = $1 AND end_user_id = $2', [t.product.id, 'user-1']))[0] as
      { email: string | null; name: string | null; updated_at: Date };
    assert.equal((await post(signalBody({ email: 'ada@example.com', name: 'Ada' }), t)).statusCode, 201);
    const first = await user();
    assert.equal((await post(signalBody(), t)).statusCode, 201);
    assert.equal((await post(signalBody({ email: 'ada@example.com' }), t)).statusCode, 201);
    assert.deepEqual(await user(), first, 'nothing new: the row is not written');
    assert.equal((await post(signalBody({ name: 'Ada L.' }), t)).statusCode, 201);
    const renamed = await user();
    assert.deepEqual([renamed.email, renamed.name], ['ada@example.com', 'Ada L.']);
    assert.ok(renamed.updated_at > first.updated_at);
  });

  const valid = signalBody();
  const bad: Array<[string, Record<string, unknown>]> = [
    ['title of 2 characters', { title: 'ab' }],
    ['title of 181 characters', { title: 'x'.repeat(181) }],
    ['body of 2 characters', { body: 'ab' }],
    ['body of 10001 characters', { body: 'x'.repeat(10_001) }],
    ['idempotencyKey of 7 characters', { idempotencyKey: 'x'.repeat(7) }],
    ['idempotencyKey of 181 characters', { idempotencyKey: 'x'.repeat(181) }],
    ['an unknown kind', { kind: 'praise' }],
    ['a malformed email', { email: 'not-an-email' }],
    ['an unknown property', { priority: 'high' }],
    ['a number as title', { title: 12345 }],
    ['context that is an array', { context: [1, 2] }],
    ['a missing endUserId', { endUserId: undefined }],
    ['a missing title', { title: undefined }],
    ['a missing body', { body: undefined }],
    ['a missing idempotencyKey', { idempotencyKey: undefined }],
  ];
  const rows = async () => (await ctx.dataSource.query(
    `SELECT (SELECT count(*)::int FROM signals WHERE product_id = $1) AS signals, (SELECT count(*)::int FROM threads WHERE product_id = $1) AS threads,
            (SELECT count(*)::int FROM end_users WHERE product_id = $1) AS "endUsers", (SELECT count(*)::int FROM outbox_events WHERE organization_id = $2 AND event_type = 'signal.created') AS events`,
    [tenant.product.id, tenant.organizationId]))[0];
  for (const [name, change] of bad) {
    it(`refuses ${name} with 400 VALIDATION_FAILED and writes nothing`, async () => {
      const before = await rows();
      const payload = { ...valid, idempotencyKey: `bad-${counter++}-key`, ...change };
      const res = await post(JSON.parse(JSON.stringify(payload)));
      assert.equal(res.statusCode, 400, res.body);
      assert.equal(errorCode(res), 'VALIDATION_FAILED');
      assert.deepEqual(await rows(), before);
    });
  }

  it('accepts every bound exactly', async () => {
    for (const change of [
      { title: 'abc', body: 'xyz', idempotencyKey: `k${counter++}`.padEnd(8, 'k') },
      { title: 'x'.repeat(180), body: 'x'.repeat(10_000), idempotencyKey: `k${counter++}`.padEnd(180, 'k') },
    ]) {
      const res = await post({ ...valid, ...change });
      assert.equal(res.statusCode, 201, res.body);
    }
    for (const kind of ['support', 'bug', 'feature', 'ux', 'review']) {
      assert.equal((await post(signalBody({ kind }))).statusCode, 201);
    }
  });

  it('replays the same idempotencyKey with 200, replayed:true and the same ids, writing nothing twice', async () => {
    const body = signalBody();
    const first = (await post(body)).json().data;
    const again = await post({ ...body, title: 'A different title' });
    assert.equal(again.statusCode, 200);
    assert.deepEqual(again.json().data, { ...first, replayed: true });
    assert.equal(await ctx.dataSource.getRepository(Signal).countBy({ idempotencyKey: body.idempotencyKey }), 1);
  });

  it('concurrent duplicates create one signal, one thread and one event', async () => {
    const body = signalBody({ endUserId: 'racer' });
    const answers = await Promise.all(Array.from({ length: 12 }, () => post(body)));
    const ids = new Set(answers.map((a) => a.json().data.id));
    assert.equal(ids.size, 1);
    assert.deepEqual(answers.map((a) => a.statusCode).sort(), [200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 201]);
    const [id] = [...ids];
    assert.equal(await ctx.dataSource.getRepository(Thread).countBy({ endUserId: 'racer', productId: tenant.product.id }), 1);
    const events: unknown[] = await ctx.dataSource.query(`SELECT 1 FROM outbox_events WHERE payload->>'signalId' = $1`, [id]);
    assert.equal(events.length, 1);
  });

  it('intakes that arrive together are written in groups, each decided as if it came alone', async () => {
    const [a, b] = [await createTenant(SCOPES), await createTenant(SCOPES)];
    const tag = `group-${counter++}`;
    const names = ['Ada', 'Bo', 'Cy', 'Di', 'Ed', 'Flo', 'Gus', 'Hal'];
    const answers = await Promise.all([
      // One new end user named by eight signals at once, each with a name of its own and the same email.
      ...names.map((name, i) => post(signalBody({ endUserId: `${tag}-shared`, email: 'shared@example.com', name, idempotencyKey: `${tag}-named-${i}` }), a)),
      // Six copies of one signal.
      ...Array.from({ length: 6 }, () => post(signalBody({ endUserId: `${tag}-dup`, idempotencyKey: `${tag}-dup` }), a)),
      // Another workspace's signals in the same moment.
      ...Array.from({ length: 10 }, (_, i) => post(signalBody({ endUserId: `${tag}-b${i % 3}`, idempotencyKey: `${tag}-b-${i}` }), b)),
    ]);
    assert.deepEqual(answers.map((r) => r.statusCode).sort(), [...Array(5).fill(200), ...Array(19).fill(201)], answers.map((r) => r.body).join('\n'));
    const dupIds = new Set(answers.slice(8, 14).map((r) => `${r.json().data.id} ${r.json().data.threadId}`));
    assert.equal(dupIds.size, 1, 'the copies answer the one stored signal');
    const [counts]: Array<Record<string, number>> = await ctx.dataSource.query(
      `SELECT (SELECT count(*)::int FROM signals WHERE product_id IN ($1, $2)) AS signals,
              (SELECT count(DISTINCT xmin::text)::int FROM signals WHERE product_id IN ($1, $2)) AS transactions,
              (SELECT count(*)::int FROM threads WHERE product_id IN ($1, $2)) AS threads,
              (SELECT count(*)::int FROM thread_messages m JOIN threads t ON t.id = m.thread_id WHERE t.product_id IN ($1, $2)) AS messages,
              (SELECT count(*)::int FROM outbox_events WHERE product_id IN ($1, $2) AND event_type = 'signal.created') AS events,
              (SELECT count(*)::int FROM end_users WHERE product_id IN ($1, $2)) AS end_users`,
      [a.product.id, b.product.id]);
    assert.deepEqual({ ...counts, transactions: undefined }, { signals: 19, transactions: undefined, threads: 19, messages: 19, events: 19, end_users: 5 });
    assert.ok(counts.transactions < 19, `19 signals in ${counts.transactions} transactions: grouped`);
    const [shared]: Array<{ email: string; name: string }> = await ctx.dataSource.query(
      'SELECT email, name FROM end_users WHERE product_id = $1 AND end_user_id = $2', [a.product.id, `${tag}-shared`]);
    assert.equal(shared.email, 'shared@example.com');
    assert.ok(names.includes(shared.name), shared.name);
    const [named]: Array<{ transactions: number }> = await ctx.dataSource.query(
      'SELECT count(DISTINCT xmin::text)::int AS transactions FROM signals WHERE product_id = $1 AND end_user_id = $2', [a.product.id, `${tag}-shared`]);
    assert.ok(named.transactions < 8, 'a group naming one new end user many times is written as a group, not refused and run again one by one');
    const mixed: Array<{ organization_id: string; product_id: string }> = await ctx.dataSource.query(
      `SELECT DISTINCT t.organization_id, t.product_id FROM signals s JOIN threads t ON t.id = s.thread_id
        WHERE s.idempotency_key LIKE $1`, [`${tag}-b-%`]);
    assert.deepEqual(mixed, [{ organization_id: b.organizationId, product_id: b.product.id }], 'each row keeps its own workspace');
  });

  it('the same idempotencyKey in another product is a different signal', async () => {
    const other = await createTenant(SCOPES);
    const body = signalBody();
    const a = await post(body);
    const b = await post(body, other);
    assert.equal(a.statusCode, 201);
    assert.equal(b.statusCode, 201);
    assert.notEqual(a.json().data.id, b.json().data.id);
  });

  it('past the monthly allowance stores the signal with overAllowance and analysis waiting', async () => {
    const t = await createTenant(SCOPES);
    await ctx.dataSource.getRepository(IntakeLimit).insert({ organizationId: t.organizationId, monthlySignalAllowance: 1, dailySafetyCeiling: null });
    const first = await post(signalBody(), t);
    const second = await post(signalBody(), t);
    assert.equal(first.statusCode, 201);
    assert.equal(second.statusCode, 201);
    const list = (await get('/api/v1/signals', t)).json().data;
    const byId = new Map(list.map((s: { id: string }) => [s.id, s]));
    assert.equal((byId.get(first.json().data.id) as { overAllowance: boolean }).overAllowance, false);
    const over = byId.get(second.json().data.id) as { overAllowance: boolean; analysisState: string };
    assert.equal(over.overAllowance, true);
    assert.equal(over.analysisState, 'waiting');
  });

  it('past the daily safety ceiling answers 429 INTAKE_SAFETY_CEILING with retry-after to the next UTC day', async () => {
    const t = await createTenant(SCOPES);
    await ctx.dataSource.getRepository(IntakeLimit).insert({ organizationId: t.organizationId, monthlySignalAllowance: null, dailySafetyCeiling: 2 });
    assert.equal((await post(signalBody(), t)).statusCode, 201);
    const kept = signalBody();
    assert.equal((await post(kept, t)).statusCode, 201);
    const refused = await post(signalBody(), t);
    assert.equal(refused.statusCode, 429);
    assert.equal(errorCode(refused), 'INTAKE_SAFETY_CEILING');
    const retryAfter = Number(refused.headers['retry-after']);
    const expected = secondsToNextUtcDay(new Date());
    assert.ok(Math.abs(retryAfter - expected) <= 2, `${retryAfter} vs ${expected}`);
    assert.equal(await ctx.dataSource.getRepository(Signal).countBy({ organizationId: t.organizationId }), 2);
    const [{ day }] = await ctx.dataSource.query(
      `SELECT sum(count)::int AS day FROM intake_counters WHERE organization_id = $1 AND period LIKE 'day:%'`, [t.organizationId]);
    assert.equal(day, 2, 'a refused signal is not counted');
    assert.equal((await ctx.dataSource.getRepository(OutboxEvent).countBy({ organizationId: t.organizationId, eventType: 'signal.created' })), 2);
    assert.equal((await post(kept, t)).statusCode, 200, 'a replay is not a new submission');
  });

  it('the ceiling holds exactly under concurrent intake', async () => {
    const t = await createTenant(SCOPES);
    await ctx.dataSource.getRepository(IntakeLimit).insert({ organizationId: t.organizationId, monthlySignalAllowance: null, dailySafetyCeiling: 5 });
    const results = await Promise.all(Array.from({ length: 12 }, () => post(signalBody(), t)));
    assert.equal(results.filter((r) => r.statusCode === 201).length, 5);
    assert.equal(results.filter((r) => r.statusCode === 429).length, 7);
    assert.equal(await ctx.dataSource.getRepository(Signal).countBy({ organizationId: t.organizationId }), 5);
  });

  it('the ceiling holds exactly under concurrent intake when a block is one unit (a ceiling below 64)', async () => {
    const t = await createTenant(SCOPES);
    const ceiling = 39;
    await ctx.dataSource.getRepository(IntakeLimit).insert({ organizationId: t.organizationId, monthlySignalAllowance: 10, dailySafetyCeiling: ceiling });
    // Without an AI provider the signals are not analysed, so the analysis relay (whose exact count may
    // clear a flag set early) never rewrites over_allowance: what is counted below is intake's own flag.
    const noAi = await ctx.buildApp({ aiBaseUrl: undefined, aiModel: undefined });
    const results = await Promise.all(Array.from({ length: ceiling + 25 }, () => call(withKey(t.key, {
      method: 'POST', url: '/api/v1/signals', payload: signalBody() as object,
    }), noAi)));
    assert.equal(results.filter((r) => r.statusCode === 201).length, ceiling, 'no overshoot');
    assert.equal(results.filter((r) => r.statusCode === 429).length, 25, 'no undershoot');
    assert.equal(await ctx.dataSource.getRepository(Signal).countBy({ organizationId: t.organizationId }), ceiling);
    const days: Array<{ count: number }> = await ctx.dataSource.query(
      `SELECT count FROM intake_counters WHERE organization_id = $1 AND period LIKE 'day:%'`, [t.organizationId]);
    assert.deepEqual(days.map((r) => r.count), [ceiling], 'one row a day, at the ceiling');
    const within: Array<{ n: number }> = await ctx.dataSource.query(
      `SELECT count(*)::int AS n FROM signals WHERE organization_id = $1 AND NOT over_allowance`, [t.organizationId]);
    assert.equal(within[0].n, 10, 'exactly the allowance within it');
  });

  it('two API processes take the day in blocks of a 64th: never past the ceiling, refused early by at most one and a half blocks', async () => {
    const t = await createTenant(SCOPES);
    const ceiling = 200; // blocks of 4
    await ctx.dataSource.getRepository(IntakeLimit).insert({ organizationId: t.organizationId, monthlySignalAllowance: 100, dailySafetyCeiling: ceiling });
    const [a, b] = await Promise.all([ctx.buildApp({ aiBaseUrl: undefined, aiModel: undefined }), ctx.buildApp({ aiBaseUrl: undefined, aiModel: undefined })]);
    const dayCount = async () => (await ctx.dataSource.query(
      `SELECT count FROM intake_counters WHERE organization_id = $1 AND period LIKE 'day:%'`, [t.organizationId]))[0]?.count as number | undefined;
    const intake = (app: FastifyInstance, body = signalBody()) => call(withKey(t.key, { method: 'POST', url: '/api/v1/signals', payload: body as object }),
      app);
    assert.equal((await intake(a)).statusCode, 201);
    assert.equal(await dayCount(), 4, 'the first signal took a block');
    const replayed = signalBody();
    assert.equal((await intake(a, replayed)).statusCode, 201);
    assert.equal((await intake(b, replayed)).statusCode, 200, 'a replay in the other process');
    // Half-way through its block the first process takes the next in the background; the other took its
    // own block for the replay and gave the unit back.
    await eventually(async () => (await dayCount()) === 12, 5_000);
    const results = await Promise.all(Array.from({ length: ceiling + 20 }, (_, i) => intake(i % 2 === 0 ? a : b)));
    const stored = await ctx.dataSource.getRepository(Signal).countBy({ organizationId: t.organizationId });
    assert.equal(results.filter((r) => r.statusCode === 201).length + 2, stored);
    assert.ok(stored <= ceiling, `${stored} stored: never past the ceiling`);
    assert.ok(stored >= ceiling - 6, `${stored} stored: refused early by at most one and a half blocks (two processes)`);
    assert.equal(await dayCount(), ceiling, 'the day stops at the ceiling');
    assert.ok(results.filter((r) => r.statusCode === 429).every((r) => errorCode(r) === 'INTAKE_SAFETY_CEILING'));
    const within: Array<{ n: number }> = await ctx.dataSource.query(
      `SELECT count(*)::int AS n FROM signals WHERE organization_id = $1 AND NOT over_allowance`, [t.organizationId]);
    assert.ok(within[0].n <= 100 && within[0].n >= 97, `${within[0].n} signals within an allowance of 100 (blocks of 2)`);
  });

  it('a raised ceiling lets intake in again within a second', async () => {
    const t = await createTenant(SCOPES);
    await ctx.dataSource.getRepository(IntakeLimit).insert({ organizationId: t.organizationId, monthlySignalAllowance: null, dailySafetyCeiling: 1 });
    assert.equal((await post(signalBody(), t)).statusCode, 201);
    assert.equal((await post(signalBody(), t)).statusCode, 429);
    await ctx.dataSource.getRepository(IntakeLimit).update({ organizationId: t.organizationId }, { dailySafetyCeiling: 2 });
    const started = Date.now();
    await eventually(async () => (await post(signalBody(), t)).statusCode === 201, 5_000);
    assert.ok(Date.now() - started < 2_000, `${Date.now() - started} ms`);
  });

  it('a lowered ceiling refuses at once, although this process still holds units of the day', async () => {
    const t = await createTenant(SCOPES);
    await ctx.dataSource.getRepository(IntakeLimit).insert({ organizationId: t.organizationId, monthlySignalAllowance: null, dailySafetyCeiling: 100 });
    for (let i = 0; i < 5; i++) assert.equal((await post(signalBody(), t)).statusCode, 201);
    const [{ count }] = await ctx.dataSource.query(
      `SELECT count FROM intake_counters WHERE organization_id = $1 AND period LIKE 'day:%'`, [t.organizationId]);
    assert.ok(count > 5, `${count} units taken for 5 signals: this process still holds some`);
    await ctx.dataSource.getRepository(IntakeLimit).update({ organizationId: t.organizationId }, { dailySafetyCeiling: 3 });
    const refused = await post(signalBody(), t);
    assert.equal(refused.statusCode, 429);
    assert.equal(errorCode(refused), 'INTAKE_SAFETY_CEILING');
  });

  it('secondsToNextUtcDay counts to midnight UTC', () => {
    assert.equal(secondsToNextUtcDay(new Date('2026-01-31T23:59:30.000Z')), 30);
    assert.equal(secondsToNextUtcDay(new Date('2026-02-01T00:00:00.000Z')), 86_400);
  });

  it('lists newest first with category, since, endUserId filters and a cursor', async () => {
    const t = await createTenant(SCOPES);
    const made: string[] = [];
    for (const [i, kind] of ['bug', 'ux', 'bug'].entries()) {
      made.push((await post(signalBody({ kind, endUserId: `u${i}` }), t)).json().data.id);
    }
    const all = (await get('/api/v1/signals?limit=2', t)).json();
    assert.deepEqual(all.data.map((s: { id: string }) => s.id), [made[2], made[1]]);
    const rest = (await get(`/api/v1/signals?limit=2&cursor=${all.nextCursor}`, t)).json();
    assert.deepEqual(rest.data.map((s: { id: string }) => s.id), [made[0]]);
    assert.equal(rest.nextCursor, null);
    const bugs = (await get('/api/v1/signals?category=bug', t)).json().data;
    assert.deepEqual(bugs.map((s: { id: string }) => s.id), [made[2], made[0]]);
    assert.equal((await get('/api/v1/signals?endUserId=u1', t)).json().data.length, 1);
    assert.equal((await get(`/api/v1/signals?since=${new Date(Date.now() + 60_000).toISOString()}`, t)).json().data.length, 0);
    assert.equal((await get('/api/v1/signals?category=praise', t)).statusCode, 400);
    assert.equal((await get('/api/v1/signals?limit=101', t)).statusCode, 400);
  });

  it('reads one signal with linked features; another product\'s signal is 404', async () => {
    const id = (await post(signalBody())).json().data.id;
    const one = await get(`/api/v1/signals/${id}`);
    assert.equal(one.statusCode, 200);
    assert.equal(one.json().data.id, id);
    assert.deepEqual(one.json().data.features, []);
    const other = await createTenant(SCOPES);
    const res = await get(`/api/v1/signals/${id}`, other);
    assert.equal(res.statusCode, 404);
    assert.equal(errorCode(res), 'NOT_FOUND');
  });

  it('needs the signals scopes', async () => {
    const t = await createTenant(['service:threads:read']);
    assert.equal(errorCode(await post(signalBody(), t)), 'INSUFFICIENT_SCOPE');
    assert.equal(errorCode(await get('/api/v1/signals', t)), 'INSUFFICIENT_SCOPE');
  });
});
