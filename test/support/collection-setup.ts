import { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { Tenant, asTeammate, call } from './fixtures';
import { ctx } from './root-hooks';

export const TERMS = {
  displayModes: ['full_name', 'first_name'], identityFields: ['name', 'company'], channels: ['website', 'sales'], media: ['text', 'video'],
  paidUseAllowed: false, translationAllowed: true, geography: ['worldwide'], validityDays: null,
};

export type Session = Tenant['owner'];

export async function as(session: Session, opts: InjectOptions, app: FastifyInstance = ctx.app): Promise<LightMyRequestResponse> {
  return call(asTeammate(session, opts), app);
}

export async function publishTemplate(t: Tenant, name = 'Standard release', wording = 'I agree that my story may be shown on the website.') {
  const res = await as(t.owner, { method: 'POST', url: '/api/proof/collect/consent-templates',
    payload: { productId: t.product.id, name, wording, terms: TERMS } });
  if (res.statusCode !== 201) throw new Error(res.body);
  return res.json().data as { id: string; version: number; wordingHash: string; templateId: string };
}

export async function newQuestion(t: Tenant, text = 'What changed for your team?') {
  const res = await as(t.owner, { method: 'POST', url: '/api/proof/collect/questions', payload: { text, kind: 'long_text' } });
  if (res.statusCode !== 201) throw new Error(res.body);
  return res.json().data as { questionId: string; version: number; id: string };
}

/** A live flow with one required question, an NPS rating routed by default and a consent template. */
export async function liveFlow(t: Tenant, app: FastifyInstance = ctx.app) {
  const template = await publishTemplate(t);
  const question = await newQuestion(t);
  const created = await as(t.owner, {
    method: 'POST', url: '/api/proof/collect/forms',
    payload: {
      productId: t.product.id, name: 'Customer stories',
      definition: {
        consentTemplateVersionId: template.id, rating: { scale: 'nps', required: false }, mediaKinds: ['text', 'video'],
        questions: [{ questionId: question.questionId, version: 1, required: true }],
      },
    },
  }, app);
  if (created.statusCode !== 201) throw new Error(created.body);
  const flow = created.json().data;
  const published = await as(t.owner, { method: 'POST', url: `/api/proof/collect/forms/${flow.id}`, payload: { draftRevision: flow.draftRevision } }, app);
  if (published.statusCode !== 201) throw new Error(published.body);
  return { flow, template, question, version: published.json().data.flowVersion };
}
