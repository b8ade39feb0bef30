import { randomBytes } from 'node:crypto';
import fastifyCookie from '@fastify/cookie';
import Fastify, { FastifyInstance } from 'fastify';
import { validationFailed } from '../runtime/service-error';
import type { AppDeps } from './app-deps';
import { registerAuth } from './plugins/auth';
import { frameworkErrorHandler, registerErrorHandling } from './plugins/errors';
import { BODY_LIMIT, PROOF_BODY_LIMIT, isCustomerRequest } from './plugins/route-traits';
import { collectControlRoutes, customerReviewRoutes, inboxControlLinkRoutes } from './collection/collect-control';
import { collectDraftRoutes } from './collection/collect-drafts';
import { collectInterviewRoutes } from './collection/collect-interview';
import { collectNojsRoutes } from './collection/collect-nojs';
import { collectSessionRoutes } from './collection/collect-sessions';
import { collectUploadRoutes } from './collection/collect-uploads';
import { customerPageRoutes } from './collection/customer-pages';
import { refuseSecretsInUrl } from './collection/customer-auth';
import { collectionFlowRoutes } from './collection/collection-flows';
import { collectionLibraryRoutes } from './collection/collection-library';
import { collectionRequestRoutes } from './collection/collection-requests';
import { keyRequestRoutes } from './collection/key-requests';
import { collectionWelcomeVideoRoutes } from './collection/collection-welcome-videos';
import { featureRoutes } from './customer-loop/features';
import { healthRoutes } from './platform/health';
import { identityMergeRoutes } from './identity-merge';
import { registerCustomerCors } from './plugins/customer-cors';
import { registerIdempotency } from './plugins/idempotency';
import { inboxRoutes } from './customer-loop/inbox';
import { installationRoutes } from './platform/installation';
import { registerJsonBodyParser } from './plugins/json-body';
import { registerOpenApi } from './plugins/openapi';
import { registerMetrics } from './plugins/metrics';
import { registerPublicRateLimit } from './plugins/public-rate-limit';
import { redactingLogger, requestLogger } from './plugins/request-log';
import { proofAiRoutes } from './ai/proof-ai';
import { proofAssetRoutes } from './proof/proof-assets';
import { proofEventRoutes } from './proof/proof-events';
import { proofExportRoutes } from './proof/proof-exports';
import { proofItemRoutes } from './proof/proof-items';
import { proofPlacementRoutes } from './proof/proof-placements';
import { proofSubmissionRoutes } from './proof/proof-submissions';
import { releaseRoutes } from './customer-loop/releases';
import { publicRoadmapRoutes } from './customer-loop/public-roadmap';
import { roadmapPageRoutes } from './customer-loop/roadmap-pages';
import { signalRoutes } from './customer-loop/signals';
import { similarRoutes } from './customer-loop/similar';
import { threadRoutes } from './customer-loop/threads';
import { publicProofRoutes } from './proof/public-proof';
import { wallPageRoutes } from './proof/wall-pages';
import { yupValidatorCompiler } from './plugins/validation';
import { registerWebPages } from './plugins/web-pages';
import { whoamiRoutes } from './platform/whoami';
import { workspaceFeatureRoutes } from './customer-loop/workspace-features';
import { workspaceKeyRoutes } from './platform/workspace-keys';
import { workspaceProofRoutes } from './proof/workspace-proof';
import { workspaceSessionRoutes } from './platform/workspace-session';
import { workspaceSignInRoutes } from './platform/workspace-sign-in';
import { consolePageRoutes } from './platform/console-pages';
import { workspaceWebhookRoutes } from './webhooks/workspace-webhooks';
import { workspaceThreadRoutes } from './customer-loop/workspace-threads';
import { valueEventRoutes } from './integrations/value-events';
import { hookRoutes } from './integrations/hooks';
import { stripeConnectionRoutes } from './integrations/stripe-connections';
import { rewardRoutes } from './integrations/rewards';
import { crmDealRoutes } from './integrations/crm-deals';
import { sourceRoutes } from './integrations/sources';
import { healthCheckRoutes } from './integrations/health';
import { streamHostRoutes } from './integrations/stream-host';
import { automationTemplateRoutes } from './integrations/automation-templates';
import { roomRoutes } from './rooms/rooms';
import { agentRunRoutes } from './rooms/agent-runs';
import { workspaceRoomRoutes } from './rooms/workspace-rooms';
import { roomDocumentRoutes } from './rooms/room-documents';
import { roomJobRoutes } from './rooms/room-jobs';
import { roomMessageExtraRoutes } from './rooms/room-message-extras';

export const API_VERSION = '1.0.0';
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
// Request ids name a request in the logs, they guard nothing: a random prefix per process and a count, not 12 random bytes a request.
const REQUEST_ID_PREFIX = randomBytes(6).toString('hex');
let requestCount = 0;

/** A hop count: the nearest `hops` addresses of the X-Forwarded-For chain are proxies (Fastify's types take no number). */
const trustHops = (hops: number) => (_address: string, hop: number) => hop < hops;

/** Builds the whole HTTP API; `server.ts` only listens, and tests call `inject()` on it. */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    // Secret path segments (hook, payment connector and stream source tokens) and query values never reach the log.
    logger: redactingLogger(deps.logger),
    childLoggerFactory: requestLogger,
    // Which proxies may name the client in X-Forwarded-For (request.ip: rate limits, consent evidence).
    trustProxy: typeof deps.config.trustProxy === 'number' ? trustHops(deps.config.trustProxy) : deps.config.trustProxy,
    bodyLimit: BODY_LIMIT,
    // The longest parameter is the video host's source-link token (about 220 characters); each route bounds its own.
    routerOptions: { maxParamLength: 400 },
    frameworkErrors: frameworkErrorHandler,
    // A request that reaches a stopping process is served (with Connection: close), not refused with 503.
    return503OnClosing: false,
    requestIdHeader: false,
    genReqId: (req) => {
      const incoming = req.headers['x-request-id'];
      return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : `req_${REQUEST_ID_PREFIX}${(requestCount += 1).toString(36)}`;
    },
  });
  app.setValidatorCompiler(yupValidatorCompiler);
  // Response schemas are yup objects that document the answer (see plugins/responses.ts); bodies are sent as they are.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  registerJsonBodyParser(app);
  // Parses the Cookie header once per request; the session cookie is read from request.cookies.
  await app.register(fastifyCookie);
  registerErrorHandling(app);
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    // A NUL in a path or query value could only end as a database error.
    if (/%00/i.test(request.url)) throw validationFailed([{ path: '', message: 'the URL must not contain %00' }]);
    if (isCustomerRequest(request)) refuseSecretsInUrl(request);
  });
  app.addHook('onRoute', (route) => {
    // The proof key API and customer JSON bodies are 256 KB at most; a route may declare its own limit.
    if ((route.config?.proofApi || route.config?.customer) && route.bodyLimit === undefined) route.bodyLimit = PROOF_BODY_LIMIT;
  });
  registerOpenApi(app, API_VERSION, deps.config.publicBaseUrl);
  await registerWebPages(app);
  await registerCustomerCors(app, deps.dataSource, deps.config);
  registerAuth(app, deps.dataSource, deps.config);
  registerIdempotency(app, deps.dataSource);
  await registerPublicRateLimit(app, deps.config);
  registerMetrics(app);
  app.decorateRequest('customerSecret', null);

  app.decorate('draining', false);
  await app.register(healthRoutes, deps);
  await app.register(whoamiRoutes, deps);
  await app.register(installationRoutes, deps);
  await app.register(workspaceSessionRoutes, deps);
  await app.register(workspaceSignInRoutes, deps);
  await app.register(consolePageRoutes, deps);
  await app.register(workspaceKeyRoutes, deps);
  await app.register(workspaceWebhookRoutes, deps);
  await app.register(proofSubmissionRoutes, deps);
  await app.register(proofItemRoutes, deps);
  await app.register(proofEventRoutes, deps);
  await app.register(proofExportRoutes, deps);
  await app.register(proofPlacementRoutes, deps);
  await app.register(publicProofRoutes, deps);
  await app.register(wallPageRoutes, deps);
  await app.register(proofAssetRoutes, deps);
  await app.register(proofAiRoutes, deps);
  await app.register(keyRequestRoutes, deps);
  await app.register(workspaceProofRoutes, deps);
  await app.register(signalRoutes, deps);
  await app.register(threadRoutes, deps);
  await app.register(workspaceThreadRoutes, deps);
  await app.register(featureRoutes, deps);
  await app.register(workspaceFeatureRoutes, deps);
  await app.register(similarRoutes, deps);
  await app.register(releaseRoutes, deps);
  await app.register(publicRoadmapRoutes, deps);
  await app.register(roadmapPageRoutes, deps);
  await app.register(inboxRoutes, deps);
  await app.register(inboxControlLinkRoutes, deps);
  await app.register(identityMergeRoutes, deps);
  await app.register(collectDraftRoutes, deps);
  await app.register(collectUploadRoutes, deps);
  await app.register(collectControlRoutes, deps);
  await app.register(collectNojsRoutes, deps);
  await app.register(collectSessionRoutes, deps);
  await app.register(customerReviewRoutes, deps);
  await app.register(collectInterviewRoutes, deps);
  await app.register(customerPageRoutes, deps);
  await app.register(collectionFlowRoutes, deps);
  await app.register(collectionLibraryRoutes, deps);
  await app.register(collectionRequestRoutes, deps);
  await app.register(collectionWelcomeVideoRoutes, deps);
  await app.register(valueEventRoutes, deps);
  await app.register(hookRoutes, deps);
  await app.register(stripeConnectionRoutes, deps);
  await app.register(rewardRoutes, deps);
  await app.register(crmDealRoutes, deps);
  await app.register(sourceRoutes, deps);
  await app.register(healthCheckRoutes, deps);
  await app.register(streamHostRoutes, deps);
  await app.register(automationTemplateRoutes, deps);
  await app.register(roomRoutes, deps);
  await app.register(agentRunRoutes, deps);
  await app.register(workspaceRoomRoutes, deps);
  await app.register(roomDocumentRoutes, deps);
  await app.register(roomJobRoutes, deps);
  await app.register(roomMessageExtraRoutes, deps);
  return app;
}
