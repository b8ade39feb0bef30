import assert from 'node:assert/strict';
import { publishTemplateVersion } from '../../db/collection/consent-templates';
import { createFlow, publicFlowView, publishFlow, saveFlow, servedFlow } from '../../db/collection/flows';
import { createQuestion } from '../../db/collection/questions';
import { createTenant } from '../support/fixtures';
import { ctx } from '../support/root-hooks';

const terms = {
  displayModes: ['full_name'], identityFields: ['name'], channels: ['website'], media: ['text'],
  paidUseAllowed: false, translationAllowed: false, geography: ['worldwide'], validityDays: null,
};

describe('collection flows: data model', () => {
  it('a flow built from a question and a consent template publishes an immutable version the live link serves', async () => {
    const t = await createTenant();
    const who = { organizationId: t.organizationId, teammateId: t.owner.id };
    const settings = { collectPageUrl: ctx.config.collectPageUrl, monthlyAllowance: 10 };
    const tpl = await publishTemplateVersion(ctx.dataSource, who, { productId: t.product.id, name: 'Standard', wording: 'I agree that my story may be shown.', terms });
    const q = await createQuestion(ctx.dataSource, who, { text: 'What changed?', kind: 'long_text' });
    const flow = await createFlow(ctx.dataSource, who, {
      productId: t.product.id, name: 'Stories',
      definition: { consentTemplateVersionId: tpl.id, questions: [{ questionId: q.questionId, version: 1, required: true }] },
    }, settings);
    const published = await publishFlow(ctx.dataSource, who, flow.id, flow.draftRevision);
    assert.equal(published.flowVersion.versionNumber, 1);
    const served = await servedFlow(ctx.dataSource.manager, flow.publicId);
    assert.equal(served.version.id, published.flowVersion.id);
    const view = await publicFlowView(ctx.dataSource.manager, served.version.id);
    assert.equal(view.wordingHash, tpl.wordingHash);
    assert.equal(view.questions[0].text, 'What changed?');
    const saved = await saveFlow(ctx.dataSource, t.organizationId, flow.id, { draftRevision: 1, definition: { title: 'New title' } }, settings);
    assert.equal(saved.draftRevision, 2);
    assert.equal((await servedFlow(ctx.dataSource.manager, flow.publicId)).version.definition.title, 'Stories');
  });
});
