import { FastifyRequest } from 'fastify';
import { array, boolean, number, object, string } from 'yup';
import {
  ResolvedConnection, createConnection, listConnections, receiveStripeEvent, resolveConnectionToken, rotateConnection, updateConnection,
} from '../../db/integrations/stripe-connections';
import { isStripeEvent, stripeSignatureProblem } from '../../db/rules/stripe-events';
import { notFound, validationFailed } from '../../runtime/service-error';
import type { AppDeps } from '../app-deps';
import { OWNERS_AND_ADMINS, sessionPrincipal } from '../plugins/auth';
import { parseJsonText } from '../plugins/json-body';
import { idParams } from '../plugins/path-params';
import { dataOf, errorOf, pageOf, timestamp, UNKNOWN_PRODUCT_ID } from '../plugins/responses';
import { pageQuery, RouteApp, strictObject } from '../plugins/validation';
import { scoringSettings } from './value-events';

const SIGNING_SECRET = /^whsec_[A-Za-z0-9+/=_-]{1,250}$/;

const connectionSchema = object({
  id: string().required(),
  productId: string().required(),
  name: string().required(),
  state: string().oneOf(['active', 'disabled'] as const).required(),
  hasSigningSecret: boolean().required(),
  invoiceMilestones: array(number().integer().defined()).defined(),
  createdAt: timestamp().required(),
  lastEventAt: timestamp().nullable().defined(),
});
const issuedConnection = object({ connection: connectionSchema.required(), url: string().required(), token: string().required() });
const signingSecret = () => string().matches(SIGNING_SECRET, 'must be the endpoint\'s signing secret (whsec_...)');
const createBody = strictObject({
  productId: string().required().max(100),
  name: string().required().min(1).max(100),
  signingSecret: signingSecret(),
}).required();
const patchBody = strictObject({
  name: string().min(1).max(100),
  signingSecret: signingSecret(),
  state: string().oneOf(['active', 'disabled'] as const),
  invoiceMilestones: array(number().required().integer().min(1).max(120)).min(1).max(20),
}).required();
const receiptSchema = object({
  received: boolean().required(),
  duplicate: boolean().required(),
  processorEventId: string().required(),
  valueEventId: string().nullable().defined(),
});
const tokenParams = strictObject({ token: string().required().max(200) });

const connectorUrl = (token: string) => `/api/public/proof/stripe/${token}`;
const resolved = new WeakMap<FastifyRequest, ResolvedConnection>();
const signatureFailed = (message: string) => validationFailed([{ path: 'stripe-signature', message }], 'the Stripe-Signature header does not verify');

/** The payment connector: one URL per connection, verified with that connection's own signing secret. */
export async function stripeConnectionRoutes(app: RouteApp, deps: AppDeps): Promise<void> {
  const ds = deps.dataSource;
  const settings = scoringSettings(deps.config);

  // The signature covers the exact bytes, so this route reads its body raw; JSON is parsed after the check.
  await app.register(async (raw) => {
    raw.removeAllContentTypeParsers();
    raw.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
    raw.post('/api/public/proof/stripe/:token', {
      bodyLimit: 1024 * 1024,
      schema: {
        params: tokenParams,
        response: {
          400: errorOf('VALIDATION_FAILED: Stripe-Signature is missing, does not match, is over 5 min old or ahead (details path stripe-signature), the ' +
            'connection has no signing secret, or the body is not an event'),
          404: errorOf('NOT_FOUND: the token is unknown, malformed or rotated away, the connection is disabled or its product inactive (one answer for all)'),
          200: dataOf(receiptSchema),
        },
      },
      config: {
        tag: 'integrations', auth: 'public', operationId: 'receiveStripeEvent',
        summary: 'Payment-processor webhook: verified, stored once per event id, mapped to value events',
      },
      onRequest: async (request) => {
        const connection = await resolveConnectionToken(ds, (request.params as { token: string }).token);
        if (!connection) throw notFound('connection');
        resolved.set(request, connection);
      },
    }, async (request) => {
      const connection = resolved.get(request)!;
      const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const header = request.headers['stripe-signature'];
      const problem = stripeSignatureProblem(typeof header === 'string' ? header : undefined, body, connection.signingSecret, Math.floor(Date.now() / 1000));
      if (problem) throw signatureFailed(problem);
      // Parsed as every JSON body is (json-body.ts): a signed body is still refused for what no handler should see.
      const event = parseJsonText(body.toString('utf8'));
      if (!isStripeEvent(event)) {
        throw validationFailed([{ path: '', message: 'an event needs id, type, created and data.object' }]);
      }
      return { data: await receiveStripeEvent(ds, connection, event, settings) };
    });
  });

  app.post('/api/workspace/proof/stripe-connections', {
    schema: { body: createBody, response: { 404: UNKNOWN_PRODUCT_ID, 201: dataOf(issuedConnection) } },
    config: { tag: 'integrations', ...OWNERS_AND_ADMINS, operationId: 'createStripeConnection',
      summary: 'Connect a payment processor; the URL token is shown once' },
  }, async (request, reply) => {
    const { connection, token } = await createConnection(ds, sessionPrincipal(request).organizationId, request.body);
    return reply.code(201).send({ data: { connection, url: connectorUrl(token), token } });
  });

  app.get('/api/workspace/proof/stripe-connections', {
    schema: { querystring: strictObject(pageQuery), response: { 200: pageOf(connectionSchema) } },
    config: { tag: 'integrations', ...OWNERS_AND_ADMINS, operationId: 'listStripeConnections', summary: 'Payment connections; never the signing secret' },
  }, async (request) => listConnections(ds, sessionPrincipal(request).organizationId, request.query));

  app.patch('/api/workspace/proof/stripe-connections/:id', {
    schema: { params: idParams, body: patchBody, response: { 404: errorOf('NOT_FOUND: no connection with this id in the workspace'),
      200: dataOf(connectionSchema) } },
    config: { tag: 'integrations', ...OWNERS_AND_ADMINS, operationId: 'updateStripeConnection',
      summary: 'Rename, set the signing secret, disable, or set invoice milestones' },
  }, async (request) => ({ data: await updateConnection(ds, sessionPrincipal(request).organizationId, request.params.id, request.body) }));

  app.post('/api/workspace/proof/stripe-connections/:id/rotate', {
    schema: { params: idParams, response: { 404: errorOf('NOT_FOUND: no connection with this id in the workspace'),
      409: errorOf('CONFLICT: the connection is disabled; a disabled connection is not rotated'), 200: dataOf(issuedConnection) } },
    config: { tag: 'integrations', ...OWNERS_AND_ADMINS, operationId: 'rotateStripeConnection',
      summary: 'A new URL token, shown once; the old URL stops at once' },
  }, async (request) => {
    const { connection, token } = await rotateConnection(ds, sessionPrincipal(request).organizationId, request.params.id);
    return { data: { connection, url: connectorUrl(token), token } };
  });
}
