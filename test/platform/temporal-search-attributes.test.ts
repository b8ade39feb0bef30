import assert from 'node:assert/strict';
import { WorkflowNotFoundError } from '@temporalio/client';
import { ORGANIZATION_ID, PRODUCT_ID } from '../../runtime/workflow-memo';
import { createTenant, eventually, withKey } from '../support/fixtures';
import { signalBody } from '../support/customer-loop';
import { ctx } from '../support/root-hooks';
import { signalAnalysisWorkflowId } from '../../workflows/workflow-ids';

describe('Temporal: tenant search attributes and analysis without a provider', () => {
  it('lists a tenant\'s workflows by OrganizationId and ProductId (Keyword search attributes)', async function () {
    this.timeout(30_000);
    const tenant = await createTenant(['service:signals:write']);
    const res = await ctx.app.inject(withKey(tenant.key, { method: 'POST', url: '/api/v1/signals', payload: signalBody() }));
    assert.equal(res.statusCode, 201, res.body);
    const signalId = res.json().data.id as string;
    const found = await eventually(async () => {
      const ids: string[] = [];
      for await (const wf of ctx.temporal.workflow.list({ query: `OrganizationId='${tenant.organizationId}'` })) ids.push(wf.workflowId);
      return ids.length > 0 && ids;
    });
    assert.deepEqual(found, [signalAnalysisWorkflowId(signalId)]);
    const description = await ctx.temporal.workflow.getHandle(found[0]).describe();
    assert.equal(description.typedSearchAttributes.get(ORGANIZATION_ID), tenant.organizationId);
    assert.equal(description.typedSearchAttributes.get(PRODUCT_ID), tenant.product.id);
    const other = await createTenant(['service:signals:write']);
    const none: string[] = [];
    for await (const wf of ctx.temporal.workflow.list({ query: `OrganizationId='${other.organizationId}'` })) none.push(wf.workflowId);
    assert.deepEqual(none, []);
  });

  it('without a configured AI provider a signal is stored as skipped and no analysis workflow starts', async function () {
    this.timeout(30_000);
    const app = await ctx.buildApp({ aiBaseUrl: undefined, aiModel: undefined });
    const tenant = await createTenant(['service:signals:write', 'service:signals:read']);
    const res = await app.inject(withKey(tenant.key, { method: 'POST', url: '/api/v1/signals', payload: signalBody() }));
    assert.equal(res.statusCode, 201, res.body);
    const id = res.json().data.id as string;
    const read = await app.inject(withKey(tenant.key, { method: 'GET', url: `/api/v1/signals/${id}` }));
    assert.equal(read.json().data.analysisState, 'skipped');
    // A later signal of another tenant is analysed: the relay has run past the skipped one.
    const analysed = await createTenant(['service:signals:write']);
    const next = await ctx.app.inject(withKey(analysed.key, { method: 'POST', url: '/api/v1/signals', payload: signalBody() }));
    await eventually(async () => {
      try {
        return await ctx.temporal.workflow.getHandle(signalAnalysisWorkflowId(next.json().data.id)).describe();
      } catch (err) {
        if (err instanceof WorkflowNotFoundError) return null;
        throw err;
      }
    });
    await assert.rejects(ctx.temporal.workflow.getHandle(signalAnalysisWorkflowId(id)).describe(), WorkflowNotFoundError);
    const [row] = await ctx.dataSource.query('SELECT analysis_state, analysis_queued_at FROM signals WHERE id = $1', [id]);
    assert.deepEqual(row, { analysis_state: 'skipped', analysis_queued_at: null });
  });
});
