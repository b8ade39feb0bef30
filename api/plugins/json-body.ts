import { FastifyInstance } from 'fastify';
import secureJson from 'secure-json-parse';
import { validationFailed } from '../../runtime/service-error';

export const MAX_JSON_DEPTH = 32;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * What no handler should see: nesting beyond `max`, a NUL character (PostgreSQL text refuses it), a lone
 * surrogate, a number JSON.parse turned into ±Infinity (`1e400`, a 100,000-digit literal: canonical JSON,
 * hashes and the database have no form for it).
 */
function problemIn(root: unknown, max: number): string | null {
  const stack: Array<[unknown, number]> = [[root, 1]];
  while (stack.length > 0) {
    const [value, depth] = stack.pop()!;
    if (typeof value === 'number' && !Number.isFinite(value)) return 'numbers must be finite (this one overflows a double)';
    if (typeof value === 'string' && value.includes('\u0000')) return 'strings must not contain NUL (\\u0000)';
    // Not Unicode text, so no RFC 8785 canonical form (content hashes, signatures) exists for it.
    if (typeof value === 'string' && LONE_SURROGATE.test(value)) return 'strings must not contain a lone surrogate';
    if (value === null || typeof value !== 'object') continue;
    if (depth > max) return `nesting deeper than ${max} levels`;
    for (const [key, child] of Object.entries(value)) {
      if (key.includes('\u0000')) return 'property names must not contain NUL (\\u0000)';
      if (LONE_SURROGATE.test(key)) return 'property names must not contain a lone surrogate';
      stack.push([child, depth + 1]);
    }
  }
  return null;
}

/**
 * JSON text as every body is read: prototype-poisoning keys, NUL characters, numbers beyond a double's
 * range and nesting deeper than MAX_JSON_DEPTH are refused with a 400 (thrown as a ServiceError) before any handler sees them.
 */
export function parseJsonText(text: string): unknown {
  let parsed: unknown;
  try {
    parsed = secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
  } catch (err) {
    const message = err instanceof SyntaxError ? err.message : 'the body is not valid JSON';
    throw validationFailed([{ path: '', message }], 'the body is not valid JSON');
  }
  const problem = problemIn(parsed, MAX_JSON_DEPTH);
  if (problem) throw validationFailed([{ path: '', message: problem }], `the body is refused: ${problem}`);
  return parsed;
}

/** JSON bodies through parseJsonText. */
export function registerJsonBodyParser(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    const text = body as string;
    // Many clients send the JSON content type with no body on body-less calls: that is no body.
    if (text.trim() === '') {
      done(null, undefined);
      return;
    }
    try {
      done(null, parseJsonText(text));
    } catch (err) {
      done(err as Error, undefined);
    }
  });
}
