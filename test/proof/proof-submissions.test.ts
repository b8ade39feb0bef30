import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { call, errorCode, withKey } from '../support/fixtures';
import { ProofTenant, createProofTenant, ledgerTypes, submissionBody, submit } from '../support/proof-fixtures';
import { ctx } from '../support/root-hooks';
import { createCollectionTenant, customerCall, fillDraft, startDraft, submitDraft } from '../support/collection';

describe('proof submissions', () => {
  let tenant: ProofTenant;
  const post = (payload: unknown, key?: string, headers: Record<string, string> = {}) =>
    call(withKey(key ?? tenant.key, { method: 'POST', url: '/api/v1/proof/submissions', payload: payload as object, headers }));

  before(async () => {
    tenant = await createProofTenant();
  });

  it('stores the item, its original and the consent grant; answers the fixed 201 shape', async () => {
    const res = await post(submissionBody(), undefined, { 'idempotency-key': 'submission-shape-1' });
    assert.equal(res.statusCode, 201, res.body);
    const data = res.json().data;
    assert.deepEqual(Object.keys(data).sort(), ['consentGrantId', 'originalVersionId', 'overLimit', 'overLimitReasons', 'proofItemId', 'submissionId']);
    assert.equal(data.overLimit, false);
    assert.deepEqual(data.overLimitReasons, []);
    const item = await ctx.dataSource.query('SELECT status, product_id, organization_id FROM proof_items WHERE id = $1', [data.proofItemId]);
    assert.deepEqual(item[0], { status: 'submitted', product_id: tenant.product.id, organization_id: tenant.organizationId });
    assert.deepEqual(await ledgerTypes(data.proofItemId), ['proof.response.submitted', 'proof.consent.granted']);
  });

  it('the API dying after the commit, before it answers: the retry replays the stored answer, no second item', async () => {
    // The answer is lost between the commit and the reply, as if the process had died there.
    const crashing = await ctx.buildApp({}, (a) => {
      a.addHook('preSerialization', async (request, _reply, payload) => {
        if (request.headers['x-test-lose-answer'] && !(payload as { error?: unknown }).error) throw new Error('process died');
        return payload;
      });
    }, { checkAnswers: false });
    const itemCount = async () => (await ctx.dataSource.query(
      'SELECT count(*)::int AS n FROM proof_items WHERE product_id = $1', [tenant.product.id]))[0].n as number;
    const before = await itemCount();
    const headers = { 'idempotency-key': 'submission-crash-0001' };
    const lost = await call(withKey(tenant.key, {
      method: 'POST', url: '/api/v1/proof/submissions', payload: submissionBody(), headers: { ...headers, 'x-test-lose-answer': '1' },
    }), crashing);
    assert.equal(lost.statusCode, 500);
    const retry = await post(submissionBody(), undefined, headers);
    assert.equal(retry.statusCode, 201, retry.body);
    assert.equal(retry.headers['idempotent-replayed'], 'true');
    assert.equal(await itemCount(), before + 1, 'one item for the one submission');
  });

  it('queues webhooks with ProofWebhookData: evt_<ledger id>, fetchUrl, no customer text or personal data', async () => {
    const s = await submit(tenant);
    const rows: Array<{ id: string; event_type: string; payload: Record<string, unknown> }> = await ctx.dataSource.query(
      `SELECT id, event_type, payload FROM outbox_events WHERE payload->>'proofItemId' = $1 ORDER BY created_at`, [s.proofItemId]);
    assert.deepEqual(rows.map((r) => r.event_type).sort(), ['proof.consent.granted', 'proof.response.submitted']);
    const ledger: Array<{ id: string }> = await ctx.dataSource.query('SELECT id FROM proof_events WHERE proof_item_id = $1', [s.proofItemId]);
    for (const row of rows) {
      assert.ok(ledger.some((l) => row.id === `evt_${l.id}`), 'envelope id is evt_ + ledger id');
      const data = row.payload;
      assert.equal(data.eventVersion, 1);
      assert.equal(data.fetchUrl, `/api/v1/proof/items/${s.proofItemId}`);
      assert.equal(data.productId, tenant.product.id);
      assert.ok(String(row.id).endsWith(String(data.proofEventId)));
      for (const field of ['ledgerEventType', 'occurredAt', 'emittedAt', 'actor', 'placementId', 'assetId', 'properties']) assert.ok(field in data, field);
      const text = JSON.stringify(data);
      for (const secret of ['onboarding', 'Ada', 'ada@example.com', 'Analytical', '127.0.0.1']) assert.ok(!text.includes(secret), secret);
    }
  });

  it('requires an Idempotency-Key; a retry replays; the same key with another body is 409 CONFLICT', async () => {
    const missing = await post(submissionBody());
    assert.equal(missing.statusCode, 400);
    assert.equal(errorCode(missing), 'VALIDATION_FAILED');
    const first = await post(submissionBody(), undefined, { 'idempotency-key': 'retry-key-0001' });
    const again = await post(submissionBody(), undefined, { 'idempotency-key': 'retry-key-0001' });
    assert.equal(again.statusCode, 201);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(again.json().data.proofItemId, first.json().data.proofItemId);
    const other = await post(submissionBody({ type: 'review' }), undefined, { 'idempotency-key': 'retry-key-0001' });
    assert.equal(other.statusCode, 409);
    assert.equal(errorCode(other), 'CONFLICT');
  });

  it('concurrent retries with the same key create exactly one item', async () => {
    const before = await ctx.dataSource.query('SELECT count(*)::int AS n FROM proof_items WHERE product_id = $1', [tenant.product.id]);
    const results = await Promise.all(Array.from({ length: 8 }, () => post(submissionBody(), undefined, { 'idempotency-key': 'concurrent-key-01' })));
    for (const r of results) {
      assert.ok(r.statusCode === 201 || (r.statusCode === 409 && errorCode(r) === 'IDEMPOTENCY_IN_PROGRESS'), r.body);
    }
    const after = await ctx.dataSource.query('SELECT count(*)::int AS n FROM proof_items WHERE product_id = $1', [tenant.product.id]);
    assert.equal(after[0].n, before[0].n + 1);
    const replay = await post(submissionBody(), undefined, { 'idempotency-key': 'concurrent-key-01' });
    assert.equal(replay.statusCode, 201);
    const ids = new Set([replay, ...results].filter((r) => r.statusCode === 201).map((r) => r.json().data.proofItemId));
    assert.equal(ids.size, 1);
  });

  const bad: Array<[string, Record<string, unknown>, string]> = [
    ['an unknown top-level property', { productId: 'prd_x' }, 'productId'],
    ['an unknown content property', { content: { text: 'Great product, truly.', html: '<b>' } }, 'content.html'],
    ['an unknown consent property', { consent: { ...submissionBody().consent, ip: '1.2.3.4' } }, 'consent.ip'],
    ['an unknown customer property', { customer: { personRef: 'c', phone: '1' } }, 'customer.phone'],
    ['an unknown products property', { consent: { ...submissionBody().consent, products: { all: true, except: [] } } }, 'consent.products.except'],
    ['an unknown type', { type: 'podcast' }, 'type'],
    ['an unknown channel', { consent: { ...submissionBody().consent, channels: ['billboard'] } }, 'consent.channels[0]'],
    ['a bad geography', { consent: { ...submissionBody().consent, geography: ['usa'] } }, 'consent.geography[0]'],
    ['a missing consent', { consent: undefined }, 'consent'],
    ['a non-string attribution value', { content: { text: 'Nice', attribution: { name: 5 } } }, 'content.attribution'],
  ];
  for (const [name, patch, path] of bad) {
    it(`refuses ${name} with 400 at ${path}`, async () => {
      const res = await post({ ...submissionBody(), ...patch }, undefined, { 'idempotency-key': `bad-${path}-${Date.now()}` });
      assert.equal(res.statusCode, 400, res.body);
      const paths = res.json().error.details.map((d: { path: string }) => d.path);
      assert.ok(paths.includes(path), JSON.stringify(paths));
    });
  }

  it('needs proof:submissions:write', async () => {
    const res = await post(submissionBody(), tenant.readKey, { 'idempotency-key': 'scope-check-01' });
    assert.equal(res.statusCode, 403);
    assert.equal(errorCode(res), 'INSUFFICIENT_SCOPE');
  });

  it('a used-up allowance still stores the submission, flagged overLimit', async () => {
    const app = await ctx.buildApp({ proofMonthlySubmissionAllowance: 0 });
    const s = await submit(tenant, submissionBody(), app);
    assert.equal(s.overLimit, true);
    assert.deepEqual(s.overLimitReasons, ['monthly_submission_allowance_used_up']);
    const rows = await ctx.dataSource.query('SELECT over_limit FROM proof_items WHERE id = $1', [s.proofItemId]);
    assert.equal(rows[0].over_limit, true);
  });

  it('a name of only spaces is 400 at input, never a 500 (displayMode initials, first_name); an empty attribution name too', async () => {
    for (const displayMode of ['initials', 'first_name', 'full_name']) {
      for (const name of ['   ', '\t', '']) {
        const body = submissionBody({
          content: { text: 'Nine days to two.', attribution: { name, company: 'Analytical Ltd' } },
          consent: { ...submissionBody().consent, displayMode, identityFields: ['name', 'company'] },
        });
        const res = await post(body, undefined, { 'idempotency-key': `blank-name-${randomBytes(6).toString('hex')}` });
        assert.equal(res.statusCode, 400, `${displayMode} ${JSON.stringify(name)}: ${res.body}`);
        assert.equal(errorCode(res), 'VALIDATION_FAILED');
        assert.ok(res.json().error.details.some((d: { path: string }) => d.path === 'content.attribution'), res.body);
      }
    }
    const customer = await post(submissionBody({ customer: { personRef: 'cus_blank', name: '  ' } }), undefined,
      { 'idempotency-key': `blank-customer-${randomBytes(6).toString('hex')}` });
    assert.equal(customer.statusCode, 400, customer.body);
    assert.ok(customer.json().error.details.some((d: { path: string }) => d.path === 'customer.name'), customer.body);
  });

  it('the daily safety ceiling refuses v1 submissions as it does submit and nojs: 429 INTAKE_SAFETY_CEILING, retry-after to the next UTC day, nothing stored',
    async () => {
      const t = await createCollectionTenant();
      const app = await ctx.buildApp({ dailySubmissionCeiling: 2 });
      const v1 = () => call(withKey(t.key, {
        method: 'POST', url: '/api/v1/proof/submissions', payload: submissionBody(),
        headers: { 'idempotency-key': `ceiling-${randomBytes(6).toString('hex')}` },
      }), app);
      const stories = async () => (await ctx.dataSource.query('SELECT count(*)::int AS n FROM proof_items WHERE organization_id = $1',
        [t.organizationId]))[0].n;
      assert.equal((await v1()).statusCode, 201);
      const d = await startDraft(t, app);
      await fillDraft(t, d, {}, app);
      assert.equal((await submitDraft(d, app)).statusCode, 201);
      assert.equal(await stories(), 2);

      const refused = await v1();
      assert.equal(refused.statusCode, 429, refused.body);
      assert.equal(errorCode(refused), 'INTAKE_SAFETY_CEILING');
      const now = new Date();
      const untilTomorrow = (Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1) - now.getTime()) / 1000;
      assert.ok(Math.abs(Number(refused.headers['retry-after']) - untilTomorrow) <= 5,
      `retry-after ${refused.headers['retry-after']}, ${untilTomorrow} s to the next UTC day`);
      const again = await startDraft(t, app);
      await fillDraft(t, again, {}, app);
      const draftRefused = await submitDraft(again, app);
      assert.equal(draftRefused.statusCode, 429);
      assert.equal(draftRefused.json().code, 'INTAKE_SAFETY_CEILING');
      const nojs = await customerCall({
        method: 'POST', url: '/api/proof/collect/nojs', headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({
          flow: t.publicId, flowVersion: t.flowVersionId, submissionKey: `ceiling-${randomBytes(8).toString('hex')}`,
          text: 'Support answered within the hour.', consent: 'yes', [`q.${t.questionId}`]: 'We stopped waiting.',
        }).toString(),
      }, app);
      assert.equal(nojs.statusCode, 429);
      assert.match(nojs.body, /data-code="INTAKE_SAFETY_CEILING"/);
      assert.equal(await stories(), 2, 'nothing more was stored');
    });
});
