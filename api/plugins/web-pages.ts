import fs from 'node:fs';
import path from 'node:path';
import { FastifyInstance, FastifyReply } from 'fastify';
import { WEB_DIST, WebManifest, readManifest } from '../../web/manifest';

const TYPES: Record<string, string> = { '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8' };

export interface PageHeaders {
  /** Origins that may frame the page (the wall's HTML form); default none. */
  frameAncestors?: string[];
  /** The page handles a secret (a link's code): no Referer leaves it, nothing caches it. */
  secret?: boolean;
  /** false: the page runs no script at all (an HTML-only answer such as a receipt). */
  scripts?: boolean;
}

/** The one Content-Security-Policy of every page: no inline code, nothing from another origin unless named. */
export function contentSecurityPolicy(options: PageHeaders = {}): string {
  const ancestors = options.frameAncestors?.length ? options.frameAncestors.join(' ') : "'none'";
  return [
    "default-src 'none'",
    options.scripts === false ? "script-src 'none'" : "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data: blob:",
    "media-src 'self' blob:",
    "connect-src 'self'",
    "form-action 'self'",
    "base-uri 'none'",
    `frame-ancestors ${ancestors}`,
  ].join('; ');
}

/** Sends a server-rendered page with the security headers every page carries (see docs/platform.md#pages). */
export function sendPage(reply: FastifyReply, body: string, options: PageHeaders = {}): FastifyReply {
  reply
    .type('text/html; charset=utf-8')
    .header('content-security-policy', contentSecurityPolicy(options))
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', options.secret ? 'no-referrer' : 'strict-origin-when-cross-origin');
  if (options.secret) reply.header('cache-control', 'no-store');
  return reply.send(body);
}

/**
 * The built page files, read once at start; built first when missing (a checkout that skipped `npm install`'s
 * build). A production build always carries them, so esbuild, a development tool, is only loaded here.
 */
async function loadManifest(): Promise<WebManifest> {
  const built = readManifest();
  if (built) return built;
  const { buildWeb } = await import('../../web/build');
  return buildWeb();
}

/**
 * Serves the built pages' scripts and style sheets under /assets/ (content-hashed names: cached for a year) and
 * tells routes their URLs: `app.webAsset('customer.js')`.
 */
export async function registerWebPages(app: FastifyInstance): Promise<void> {
  const manifest = await loadManifest();
  const files = new Set(Object.values(manifest));
  app.decorate('webAsset', (name: string): string | null => (Object.hasOwn(manifest, name) ? `/assets/${manifest[name]}` : null));
  app.get<{ Params: { file: string } }>('/assets/:file', { config: { hidden: true } }, async (request, reply) => {
    const file = request.params.file;
    if (!files.has(file)) return reply.callNotFound();
    return reply
      .type(TYPES[path.extname(file)] ?? 'application/octet-stream')
      .header('cache-control', 'public, max-age=31536000, immutable')
      .header('x-content-type-options', 'nosniff')
      .send(fs.createReadStream(path.join(WEB_DIST, file)));
  });
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The URL of a built page file (`<set>.js`, `<set>.css`), or null when the set has none. */
    webAsset(name: string): string | null;
  }
}
