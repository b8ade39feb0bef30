import { FastifyInstance } from 'fastify';
import secureJson from 'secure-json-parse';
import { validationFailed } from '../runtime/service-error';

export const MAX_JSON_DEPTH = 32;

function depthExceeds(root: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[root, 1]];
  while (stack.length > 0) {
    const [value, depth] = stack.pop()!;
    if (value === null || typeof value !== 'object') continue;
    if (depth > max) return true;
    for (const child of Object.values(value)) stack.push([child, depth + 1]);
  }
  return false;
}

/**
 * JSON bodies: prototype-poisoning keys and nesting deeper than MAX_JSON_DEPTH are refused with a 400
 * before any handler or recursive code sees them.
 */
export function registerJsonBodyParser(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    const text = body as string;
    if (text.trim() === '') {
      done(validationFailed([{ path: '', message: 'the body is empty; send a JSON object' }], 'empty JSON body'), undefined);
      return;
    }
    let parsed: unknown;
    try {
      parsed = secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
    } catch (err) {
      const message = err instanceof SyntaxError ? err.message : 'the body is not valid JSON';
      done(validationFailed([{ path: '', message }], 'the body is not valid JSON'), undefined);
      return;
    }
    if (depthExceeds(parsed, MAX_JSON_DEPTH)) {
      done(validationFailed([{ path: '', message: `nesting deeper than ${MAX_JSON_DEPTH} levels` }], 'the body is nested too deeply'), undefined);
      return;
    }
    done(null, parsed);
  });
}
