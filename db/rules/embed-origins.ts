/**
 * An origin a placement's wall may be framed by (`renderConfig.allowedOrigins`): https, or plain http on a
 * loopback host for local development. Nothing else can reach a `frame-ancestors` directive.
 */
export const EMBED_ORIGIN = /^(https:\/\/[A-Za-z0-9.-]+|http:\/\/(localhost|127\.0\.0\.1|\[::1\]))(:\d{1,5})?$/;
export const MAX_EMBED_ORIGINS = 20;

/** The placement's framing origins from its render configuration, keeping only well-formed ones. */
export function embedOriginsOf(renderConfig: unknown): string[] {
  const origins = (renderConfig as { allowedOrigins?: unknown } | null)?.allowedOrigins;
  if (!Array.isArray(origins)) return [];
  return origins.filter((o): o is string => typeof o === 'string' && EMBED_ORIGIN.test(o)).slice(0, MAX_EMBED_ORIGINS);
}
