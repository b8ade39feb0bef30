import assert from 'node:assert/strict';
import { newId } from '../../db/rules/ids';
import { domainVerificationWorkflowId } from '../../workflows/collection/domain-verification-workflow';
import { Tenant, createTenant, eventually } from '../support/fixtures';
import { as, liveFlow } from '../support/collection-setup';
import { ctx } from '../support/root-hooks';

interface Domain { id: string; hostname: string; status: string; records: Array<{ type: string; name: string; value: string }>; lastError: string | null; lastCheckedAt: string | null; verifiedAt: string | null }

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

  it('a CNAME to another host is not verified; another tenant cannot take or check the hostname', async () => {
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
    assert.equal((await as(other.owner, { method: 'POST', url: otherUrl, payload: { hostname } })).statusCode, 409);
    assert.equal((await as(other.owner, { method: 'POST', url, payload: { hostname } })).statusCode, 404);
  });
});
