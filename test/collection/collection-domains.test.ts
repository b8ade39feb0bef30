import { WorkflowNotFoundError } from '@temporalio/client';
import assert from 'node:assert/strict';
import { newId } from '../../db/rules/ids';
import { checkNowSignal } from '../../workflows/collection/domain-verification-workflow';
import { Tenant, createTenant, eventually } from '../support/fixtures';
import { as, liveFlow } from '../support/collection-setup';
import { ctx } from '../support/root-hooks';
import { domainVerificationWorkflowId } from '../../workflows/workflow-ids';

interface Domain { id: string; hostname: string; status: string; records: Array<{ type: string; name: string; value: string }>; lastError: string | null;
  lastCheckedAt: string | null; verifiedAt: string | null; }

describe('collection setup: custom domains verified through DNS (collection-domain/<id>)', () => {
  let t: Tenant;
  let url: string;

  const host = (tag: string) => `${tag}-${newId('h').slice(2, 10).toLowerCase()}.example.com`;
  const listed = async (hostname: string): Promise<Domain | undefined> =>
    (await as(t.owner, { method: 'GET', url })).json().data.find((d: Domain) => d.hostname === hostname);
  const setRecords = (d: Domain) => {
    for (const r of d.records) ctx.dnsSink.set(r.name, r.type === 'TXT' ? { txt: [r.value] } : { cname: `${r.value}.` });
  };

  before(async () => {
    t = await createTenant();
    url = `/api/proof/collect/forms/${(await liveFlow(t)).flow.id}/domains`;
  });

  it('checks at once and says what is missing; once the records are set, asking again verifies it', async () => {
    const hostname = host('verify');
    const added = await as(t.owner, { method: 'POST', url, payload: { hostname } });
    assert.equal(added.statusCode, 201, added.body);
    const d: Domain = added.json().data;
    assert.deepEqual(d.records, [
      { type: 'CNAME', name: hostname, value: ctx.config.collectCnameTarget },
      { type: 'TXT', name: `_proof-verify.${hostname}`, value: d.records[1].value },
    ]);
    const checked = await eventually(async () => ((await listed(hostname))?.lastCheckedAt ? listed(hostname) : undefined));
    assert.equal(checked!.status, 'pending_verification');
    assert.match(checked!.lastError!, /TXT _proof-verify\..* must be proof-verify=/);
    const run = await ctx.temporal.workflow.getHandle(domainVerificationWorkflowId(d.id)).describe();
    assert.deepEqual(run.memo, { organizationId: t.organizationId, productId: t.product.id });

    setRecords(d);
    const again = await as(t.owner, { method: 'POST', url, payload: { hostname } });
    assert.equal(again.statusCode, 200, 'the flow\'s own hostname again: checked now');
    const verified = await eventually(async () => ((await listed(hostname))?.status === 'verified' ? listed(hostname) : undefined));
    assert.equal(verified!.lastError, null);
    assert.ok(verified!.verifiedAt);
    assert.equal(await ctx.temporal.workflow.getHandle(domainVerificationWorkflowId(d.id)).result(), 'verified');
    const commands = await ctx.dataSource.query(`SELECT 1 FROM workflow_commands WHERE command->>'type' = 'collection.domain.check' AND command->>'domainId' = $1`, [d.id]);
    assert.equal(commands.length, 2, 'both asks went through the outbox');
  });

  it('a domain whose records never appear fails at the end of its window; adding it again reopens it', async () => {
    const hostname = host('late');
    const shortWindow = await ctx.buildApp({ domainVerifyTtlMs: 300 });
    const d: Domain = (await as(t.owner, { method: 'POST', url, payload: { hostname } }, shortWindow)).json().data;
    await eventually(async () => (await listed(hostname))?.status === 'failed');
    assert.equal(await ctx.temporal.workflow.getHandle(domainVerificationWorkflowId(d.id)).result(), 'failed');
    setRecords(d);
    const reopened = await as(t.owner, { method: 'POST', url, payload: { hostname } });
    assert.equal(reopened.statusCode, 200);
    assert.equal(reopened.json().data.status, 'pending_verification');
    await eventually(async () => (await listed(hostname))?.status === 'verified');
  });

  it('a CNAME to another host is not verified; another tenant may claim it meanwhile but cannot check this flow\'s', async () => {
    const hostname = host('wrong');
    const d: Domain = (await as(t.owner, { method: 'POST', url, payload: { hostname } })).json().data;
    ctx.dnsSink.set(d.records[1].name, { txt: [d.records[1].value] });
    ctx.dnsSink.set(hostname, { cname: 'elsewhere.example.net' });
    await as(t.owner, { method: 'POST', url, payload: { hostname } });
    const checked = await eventually(async () => {
      const now = await listed(hostname);
      return now?.lastError?.includes('elsewhere') ? now : undefined;
    });
    assert.equal(checked!.status, 'pending_verification');
    const other = await createTenant();
    const otherUrl = `/api/proof/collect/forms/${(await liveFlow(other)).flow.id}/domains`;
    const claimed = await as(other.owner, { method: 'POST', url: otherUrl, payload: { hostname } });
    assert.equal(claimed.statusCode, 201, 'an unverified claim holds nothing');
    assert.notEqual(claimed.json().data.records[1].value, d.records[1].value, 'each claim proves itself with its own token');
    assert.equal((await as(other.owner, { method: 'POST', url, payload: { hostname } })).statusCode, 404);
  });

  describe('claims of one hostname by several workspaces', () => {
    const preflight = (origin: string) => ctx.app.inject({
      method: 'OPTIONS', url: '/api/proof/collect/drafts/drf_none',
      headers: { origin, 'access-control-request-method': 'PATCH', 'access-control-request-headers': 'content-type' },
    });
    /** The preflight's answer once it is `status`, within the suite's origins cache bound. */
    const preflightSettles = (origin: string, status: number) => eventually(async () => (await preflight(origin)).statusCode === status,
      ctx.config.customerOriginsCacheMs + 2_000);
    const claimant = async () => {
      const tenant = await createTenant();
      const flow = (await liveFlow(tenant)).flow;
      const flowUrl = `/api/proof/collect/forms/${flow.id}/domains`;
      const list = async (hostname: string): Promise<Domain | undefined> =>
        (await as(tenant.owner, { method: 'GET', url: flowUrl })).json().data.find((d: Domain) => d.hostname === hostname);
      return { tenant, flow, url: flowUrl, list };
    };

    it('both are pending; the first whose records verify wins, the other fails, is refused with 409 and never serves', async () => {
      const hostname = host('race');
      const [a, b] = [await claimant(), await claimant()];
      const claimA = await as(a.tenant.owner, { method: 'POST', url: a.url, payload: { hostname } });
      const claimB = await as(b.tenant.owner, { method: 'POST', url: b.url, payload: { hostname } });
      assert.equal(claimA.statusCode, 201, claimA.body);
      assert.equal(claimB.statusCode, 201, claimB.body);
      const [dA, dB]: Domain[] = [claimA.json().data, claimB.json().data];
      assert.equal(dA.status, 'pending_verification');
      assert.equal(dB.status, 'pending_verification');
      assert.equal((await preflight(`https://${hostname}`)).statusCode, 403, 'no pending claim serves');

      // B's records are the ones that appear first: B wins, though A claimed first.
      ctx.dnsSink.set(hostname, { cname: `${ctx.config.collectCnameTarget}.` });
      ctx.dnsSink.set(dB.records[1].name, { txt: [dB.records[1].value] });
      assert.equal((await as(b.tenant.owner, { method: 'POST', url: b.url, payload: { hostname } })).statusCode, 200);
      await eventually(async () => (await b.list(hostname))?.status === 'verified');
      assert.equal(await ctx.temporal.workflow.getHandle(domainVerificationWorkflowId(dB.id)).result(), 'verified');

      const lost = await eventually(async () => ((await a.list(hostname))?.status === 'failed' ? a.list(hostname) : undefined));
      assert.match(lost!.lastError!, /verified for another flow/);
      // Now A's records are there too: asking again is refused, and a check it was waiting on fails.
      ctx.dnsSink.set(dA.records[1].name, { txt: [dA.records[1].value, dB.records[1].value] });
      const refused = await as(a.tenant.owner, { method: 'POST', url: a.url, payload: { hostname } });
      assert.equal(refused.statusCode, 409, refused.body);
      assert.equal(refused.json().code, 'CONFLICT');
      // A's run may already have ended on a check of its own: either way it ends failed.
      await ctx.temporal.workflow.getHandle(domainVerificationWorkflowId(dA.id)).signal(checkNowSignal).catch((err) => {
        if (!(err instanceof WorkflowNotFoundError)) throw err;
      });
      assert.equal(await ctx.temporal.workflow.getHandle(domainVerificationWorkflowId(dA.id)).result(), 'failed');
      assert.equal((await a.list(hostname))?.status, 'failed');
      // Two verified claims of one hostname cannot exist, whatever writes them.
      await assert.rejects(
        ctx.dataSource.query(`UPDATE collection_domains SET status = 'verified', verified_at = now() WHERE id = $1`, [dA.id]),
        /collection_domains_verified_hostname/);
      const holders = await ctx.dataSource.query(`SELECT flow_id FROM collection_domains WHERE hostname = $1 AND status = 'verified'`, [hostname]);
      assert.deepEqual(holders, [{ flow_id: b.flow.id }]);

      // The winner's origin is allowed; once the winner lets it go, A's failed claim serves nothing.
      const origin = `https://${hostname}`;
      await preflightSettles(origin, 204);
      assert.equal((await as(b.tenant.owner, { method: 'DELETE', url: `${b.url}?hostname=${hostname}` })).statusCode, 204);
      await preflightSettles(origin, 403);
      const qr = await as(a.tenant.owner, { method: 'GET', url: `/api/proof/collect/forms/${a.flow.id}/qr?domain=${hostname}` });
      assert.equal(qr.statusCode, 409, 'no QR code for a claim that failed');
      // The hostname is free again: A may claim it anew and, its records being there, wins it.
      assert.equal((await as(a.tenant.owner, { method: 'POST', url: a.url, payload: { hostname } })).statusCode, 200);
      await eventually(async () => (await a.list(hostname))?.status === 'verified');
      await preflightSettles(origin, 204);
    });

    it('a claim that failed (its window closed) no longer blocks another workspace', async () => {
      const hostname = host('expired');
      const [a, b] = [await claimant(), await claimant()];
      const shortWindow = await ctx.buildApp({ domainVerifyTtlMs: 300 });
      assert.equal((await as(a.tenant.owner, { method: 'POST', url: a.url, payload: { hostname } }, shortWindow)).statusCode, 201);
      await eventually(async () => (await a.list(hostname))?.status === 'failed');
      const claimB = await as(b.tenant.owner, { method: 'POST', url: b.url, payload: { hostname } });
      assert.equal(claimB.statusCode, 201, claimB.body);
      const dB: Domain = claimB.json().data;
      ctx.dnsSink.set(hostname, { cname: ctx.config.collectCnameTarget });
      ctx.dnsSink.set(dB.records[1].name, { txt: [dB.records[1].value] });
      assert.equal((await as(b.tenant.owner, { method: 'POST', url: b.url, payload: { hostname } })).statusCode, 200);
      await eventually(async () => (await b.list(hostname))?.status === 'verified');
      assert.equal((await as(a.tenant.owner, { method: 'POST', url: a.url, payload: { hostname } })).statusCode, 409);
      assert.equal((await a.list(hostname))?.status, 'failed');
    });
  });
});
