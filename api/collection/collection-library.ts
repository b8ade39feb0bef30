import { array, boolean, number, string } from 'yup';
import { listTemplateVersions, publishTemplateVersion } from '../../db/collection/consent-templates';
import { createQuestion, listQuestions, pinQuestion, getQuestion, reviseQuestion, setQuestionState } from '../../db/collection/questions';
import { QUESTION_KINDS } from '../../db/entities/collection-question-version';
import { OPTIONS_RULE, choiceOptionsAgree } from '../../db/rules/collection-question';
import { IDENTITY_FIELDS, MEDIA_KINDS } from '../../db/rules/collection-flow';
import type { AppDeps } from '../app-deps';
import { sessionPrincipal } from '../plugins/auth';
import { idParams } from '../plugins/path-params';
import { anyObject, dataOf, pageOf } from '../plugins/responses';
import { pageQuery, RouteApp, strictObject } from '../plugins/validation';
import { questionSchema, questionVersionSchema, readers, STATE_CONFLICT, templateVersionSchema, writers } from './collection-schemas';
import { CUSTOMER_ROUTE } from '../plugins/route-traits';

const questionFields = {
  text: string().min(3).max(500),
  kind: string().oneOf([...QUESTION_KINDS]),
  helpText: string().max(500),
  options: array(string().required().min(1).max(200)).min(2).max(10),
};
const questionBody = strictObject({ ...questionFields, text: questionFields.text.required(), kind: questionFields.kind.required() })
  .test('options', OPTIONS_RULE, (v) => !v || choiceOptionsAgree(v)).required();
// A PATCH is a partial change: what it leaves out carries over from the latest version (checked there).
const questionPatch = strictObject({ ...questionFields, helpText: questionFields.helpText.nullable() })
  .test('some-field', 'name at least one of text, kind, helpText, options', (v) => !v || Object.keys(v).length > 0).required();

const questionAction = strictObject({
  action: string().oneOf(['archive', 'restore', 'pin'] as const).required(),
  version: number().integer().min(1),
}).required();

const DISPLAY_MODES = ['full_name', 'first_name', 'initials', 'anonymous'];
const templateBody = strictObject({
  productId: string().required().max(100),
  name: string().required().min(1).max(120),
  wording: string().required().min(20).max(20_000),
  terms: strictObject({
    displayModes: array(string().oneOf(DISPLAY_MODES).required()).min(1).required(),
    identityFields: array(string().oneOf([...IDENTITY_FIELDS]).required()).required(),
    channels: array(string().required().min(1).max(50)).min(1).max(20).required(),
    media: array(string().oneOf([...MEDIA_KINDS]).required()).min(1).required(),
    paidUseAllowed: boolean().required(),
    translationAllowed: boolean().required(),
    geography: array(string().required().min(1).max(50)).min(1).max(50).required(),
    validityDays: number().integer().min(1).max(3650).nullable().defined(),
  }).required(),
}).required();

const stateQuery = strictObject({ ...pageQuery, state: string().oneOf(['active', 'archived'] as const) });
const productQuery = strictObject({ ...pageQuery, productId: string().max(100) });

/** The question library and consent templates: immutable versions a flow pins. */
export async function collectionLibraryRoutes(app: RouteApp, deps: AppDeps): Promise<void> {
  const ds = deps.dataSource;
  const who = (request: Parameters<typeof sessionPrincipal>[0]) => {
    const s = sessionPrincipal(request);
    return { organizationId: s.organizationId, teammateId: s.teammateId };
  };

  app.get('/api/proof/collect/questions', {
    schema: { querystring: stateQuery, response: { 200: pageOf(questionSchema) } },
    config: { tag: 'collection', ...CUSTOMER_ROUTE, ...readers, operationId: 'listCollectionQuestions',
      summary: 'The question library with how many flows use each question' },
  }, async (request) => listQuestions(ds, who(request).organizationId, request.query));

  app.post('/api/proof/collect/questions', {
    schema: { body: questionBody, response: { 201: dataOf(questionVersionSchema) } },
    config: { tag: 'collection', ...CUSTOMER_ROUTE, ...writers, operationId: 'createCollectionQuestion', summary: 'Save a new question (version 1)' },
  }, async (request, reply) => reply.code(201).send({ data: await createQuestion(ds, who(request), request.body) }));

  app.get('/api/proof/collect/questions/:id', {
    schema: { params: idParams, response: { 200: dataOf(questionSchema.shape({ versions: array(questionVersionSchema).defined() })) } },
    config: { tag: 'collection', ...CUSTOMER_ROUTE, ...readers, operationId: 'getCollectionQuestion', summary: 'A question with every version' },
  }, async (request) => ({ data: await getQuestion(ds, who(request).organizationId, request.params.id) }));

  app.patch('/api/proof/collect/questions/:id', {
    schema: { params: idParams, body: questionPatch, response: { 201: dataOf(questionVersionSchema) } },
    config: { tag: 'collection', ...CUSTOMER_ROUTE, ...writers, operationId: 'reviseCollectionQuestion',
      summary: 'Write the next version from the latest one and the fields given; earlier versions never change' },
  }, async (request, reply) => reply.code(201).send({ data: await reviseQuestion(ds, who(request), request.params.id, request.body) }));

  app.post('/api/proof/collect/questions/:id', {
    schema: { params: idParams, body: questionAction, response: { 409: STATE_CONFLICT,
      200: dataOf(anyObject().meta({ description: 'the question (archive, restore) or { flowQuestion } (build)' })) } },
    config: { tag: 'collection', ...CUSTOMER_ROUTE, ...writers, operationId: 'actOnCollectionQuestion',
      summary: 'Archive or restore a question, or build a flow question pinned to a version' },
  }, async (request) => {
    const { organizationId } = who(request);
    const { action, version } = request.body;
    if (action === 'pin') return { data: await pinQuestion(ds, organizationId, request.params.id, version) };
    return { data: await setQuestionState(ds, organizationId, request.params.id, action === 'archive' ? 'archived' : 'active') };
  });

  app.get('/api/proof/collect/consent-templates', {
    schema: { querystring: productQuery, response: { 200: pageOf(templateVersionSchema) } },
    config: { tag: 'collection', ...CUSTOMER_ROUTE, ...readers, operationId: 'listConsentTemplateVersions',
      summary: 'Consent template versions, newest first' },
  }, async (request) => listTemplateVersions(ds, who(request).organizationId, request.query));

  app.post('/api/proof/collect/consent-templates', {
    schema: { body: templateBody, response: { 201: dataOf(templateVersionSchema) } },
    config: { tag: 'collection', ...CUSTOMER_ROUTE, ...writers, operationId: 'publishConsentTemplateVersion',
      summary: 'Publish the next immutable version of a consent template (owner or admin)' },
  }, async (request, reply) => reply.code(201).send({ data: await publishTemplateVersion(ds, who(request), request.body) }));
}
