import { date, string } from 'yup';
import { SIGNAL_CATEGORIES } from '../../db/entities/signal';
import { IntakeCounters, createSignal, getSignal, listSignals } from '../../db/customer-loop/signals';
import type { AppDeps } from '../app-deps';
import { idParams } from '../plugins/path-params';
import { productTenant } from '../plugins/product-tenant';
import { dataOf, errorOf, pageOf } from '../plugins/responses';
import { signalReceiptSchema, signalSchema, signalWithFeaturesSchema } from './schemas';
import { openObject, pageQuery, RouteApp, strictObject } from '../plugins/validation';

export const createSignalBody = strictObject({
  endUserId: string().required().min(1).max(200),
  email: string().email().max(320),
  name: string().max(200),
  kind: string().oneOf([...SIGNAL_CATEGORIES]),
  title: string().required().min(3).max(180),
  body: string().required().min(3).max(10_000),
  idempotencyKey: string().required().min(8).max(180),
  context: openObject(),
}).required();

const listQuery = strictObject({
  ...pageQuery,
  category: string().oneOf([...SIGNAL_CATEGORIES]),
  since: date(),
  endUserId: string().max(200),
});

/** Signal intake and reads. Intake only commits rows; analysis is started later by the worker's relay. */
export async function signalRoutes(app: RouteApp, deps: AppDeps): Promise<void> {
  const ds = deps.dataSource;
  const limits = {
    monthlyAllowance: deps.config.signalMonthlyAllowance,
    dailyCeiling: deps.config.signalDailyCeiling,
    analysisAvailable: Boolean(deps.config.aiBaseUrl && deps.config.aiModel),
  };
  const counters = new IntakeCounters(ds);

  app.post('/api/v1/signals', {
    schema: { body: createSignalBody, response: {
      200: dataOf(signalReceiptSchema).meta({ description: 'a replay: the signal this idempotencyKey created' }),
      201: dataOf(signalReceiptSchema).meta({ description: 'stored; analysis follows' }),
      429: errorOf('INTAKE_SAFETY_CEILING: the workspace\'s daily ceiling is reached'),
    } },
    config: { tag: 'customer-loop', auth: 'key', scope: 'service:signals:write', operationId: 'createSignal',
      summary: 'Capture a signal; the same idempotencyKey replays' },
  }, async (request, reply) => {
    const receipt = await createSignal(ds, counters, productTenant(request), request.body, limits);
    return reply.code(receipt.replayed ? 200 : 201).send({ data: receipt });
  });

  app.get('/api/v1/signals', {
    schema: { querystring: listQuery, response: { 200: pageOf(signalSchema) } },
    config: { tag: 'customer-loop', auth: 'key', scope: 'service:signals:read', operationId: 'listSignals', summary: 'Signals of the product, newest first' },
  }, async (request) => {
    const { limit, cursor, ...filter } = request.query;
    return listSignals(ds, productTenant(request).productId, filter, { limit, cursor });
  });

  app.get('/api/v1/signals/:id', {
    schema: { params: idParams, response: { 200: dataOf(signalWithFeaturesSchema) } },
    config: { tag: 'customer-loop', auth: 'key', scope: 'service:signals:read', operationId: 'getSignal',
      summary: 'One signal with the features it is linked to' },
  }, async (request) => ({ data: await getSignal(ds, productTenant(request).productId, request.params.id) }));
}
