import { FastifyReply, FastifyRequest } from 'fastify';
import { boolean, object, string } from 'yup';
import { createSession, SESSION_COOKIE } from '../../db/platform/sessions';
import { redeemSignInLink, requestSignInLinks, revokeSession } from '../../db/platform/sign-in-links';
import { sha256Hex } from '../../db/rules/secrets';
import { invalidCredential } from '../../runtime/service-error';
import { enforceRate, sessionPrincipal } from '../plugins/auth';
import type { AppDeps } from '../app-deps';
import { clientAddressDigest } from '../plugins/client-address';
import { dataOf, errorOf, noContent } from '../plugins/responses';
import { RouteApp, strictObject } from '../plugins/validation';
import { signedInSchema } from './schemas';

const signInBody = strictObject({ email: string().required().email().max(320) }).required();

/**
 * Console sign-in by e-mail link (PAGES.md §5): ask for a link (always 202), trade the link for the session
 * cookie and its CSRF token, sign out. The cookie is HttpOnly and SameSite=Lax, and Secure over https.
 */
export async function workspaceSignInRoutes(app: RouteApp, deps: AppDeps): Promise<void> {
  const ds = deps.dataSource;
  const cfg = deps.config;
  const perAddress = async (request: FastifyRequest, reply: FastifyReply) => {
    await enforceRate(reply, `sign-in-ip:${clientAddressDigest(request.ip).slice(0, 32)}`, cfg.signInPerAddressPerMinute);
  };

  app.post('/api/workspace/sign-in', {
    schema: {
      body: signInBody,
      response: {
        202: dataOf(object({ accepted: boolean().required() })),
        429: errorOf('RATE_LIMITED: too many sign-in requests this minute for this address or from this client', { retryAfter: true }),
      },
    },
    onRequest: perAddress,
    config: {
      tag: 'platform',
      operationId: 'requestSignInLink',
      summary: 'E-mail a single-use 15-minute console sign-in link to a teammate with this address; always 202, whether or not one matched',
    },
  }, async (request, reply) => {
    const email = request.body.email.trim().toLowerCase();
    await enforceRate(reply, `sign-in-email:${sha256Hex(email).slice(0, 32)}`, cfg.signInPerEmailPerMinute);
    // Without SMTP no mail can go: nothing is made or queued (the workflow would only retry), and the log says what
    // to use instead. The answer is the same 202, so it still tells nobody whether the address is a teammate's.
    if (cfg.smtpUrl) await requestSignInLinks(ds, email);
    else request.log.warn('console sign-in asked for, but SMTP_URL is not set: make a link with `sv teammate sign-in-link`');
    return reply.code(202).header('cache-control', 'no-store').send({ data: { accepted: true } });
  });

  app.post('/api/workspace/sign-in/complete', {
    schema: {
      response: {
        201: dataOf(signedInSchema),
        401: errorOf('INVALID_API_KEY: the x-sign-in-token header is missing, malformed or unknown'),
        409: errorOf('ALREADY_USED: the link was used already'),
        410: errorOf('EXPIRED: the link is older than 15 minutes'),
        429: errorOf('RATE_LIMITED: too many attempts this minute from this client', { retryAfter: true }),
      },
    },
    onRequest: perAddress,
    config: {
      tag: 'platform',
      operationId: 'completeSignIn',
      summary: 'Trade a sign-in link\'s secret (header x-sign-in-token: sl_…) for the session cookie and its CSRF token; the link is then used',
    },
  }, async (request, reply) => {
    const token = request.headers['x-sign-in-token'];
    if (typeof token !== 'string') throw invalidCredential('send the link\'s secret (sl_…) in the x-sign-in-token header');
    const t = await redeemSignInLink(ds, token);
    const issued = await createSession(ds, t.id, cfg.sessionTtlHours);
    const [, value] = issued.cookie.split('=');
    reply.setCookie(SESSION_COOKIE, value, {
      path: '/', httpOnly: true, sameSite: 'lax', secure: request.protocol === 'https', expires: new Date(issued.expiresAt),
    });
    return reply.code(201).header('cache-control', 'no-store').send({
      data: {
        teammateId: t.id, organizationId: t.organizationId, email: t.email, role: t.role,
        csrfToken: issued.csrfToken, expiresAt: issued.expiresAt,
      },
    });
  });

  app.post('/api/workspace/sign-out', {
    schema: { response: { 204: noContent('signed out: the session no longer works and the cookie is cleared') } },
    config: { tag: 'platform', auth: 'session', operationId: 'signOut', summary: 'End this session' },
  }, async (request, reply) => {
    await revokeSession(ds, sessionPrincipal(request).sessionId);
    reply.clearCookie(SESSION_COOKIE, { path: '/', httpOnly: true, sameSite: 'lax', secure: request.protocol === 'https' });
    return reply.code(204).send();
  });
}
