import fs from 'node:fs';
import path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import Ajv2020, { ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

type Json = Record<string, unknown>;

/**
 * Answers are held to the fields the document lists: objects that leave additionalProperties unsaid
 * (as response schemas do, for clients' sake) are closed here.
 */
function closed(node: unknown, base: string): unknown {
  if (Array.isArray(node)) return node.map((n) => closed(n, base));
  if (node === null || typeof node !== 'object') return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node as Json)) {
    out[k] = k === '$ref' && typeof v === 'string' && v.startsWith('#/') ? `${base}${v}` : closed(v, base);
  }
  if (out.properties && out.additionalProperties === undefined) out.additionalProperties = false;
  return out;
}

/** Checks answers against one app's document. */
class Checker {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(private readonly doc: Json) {
    addFormats(this.ajv);
    this.ajv.addFormat('binary', true);
    this.ajv.addSchema(closed({ $id: 'openapi', components: doc.components }, 'openapi') as Json);
  }

  /** A failure message, or null when the answer is what the document says. */
  check(method: string, url: string, status: number, contentType: string, payload: unknown): string | null {
    const route = url.replace(/:([A-Za-z]+)/g, '{$1}');
    const op = ((this.doc.paths as Record<string, Record<string, Json>>)[route] ?? {})[method.toLowerCase()];
    if (!op) return null;
    const name = `${op.operationId as string} (${method} ${route})`;
    const response = (op.responses as Record<string, Json>)[String(status)];
    if (!response) return `${name} answered ${status}, which the document does not list`;
    const content = response.content as Record<string, { schema: Json }> | undefined;
    const json = content?.['application/json'];
    if (!json) {
      if (!content && payload !== undefined && payload !== null && String(payload).length > 0) return `${name} ${status} sent a body; the document lists none`;
      return null;
    }
    if (!/^application\/json/.test(contentType)) return `${name} ${status} answered ${contentType}, not JSON`;
    if (typeof payload !== 'string') return `${name} ${status}: the body is not serialized JSON`;
    const key = `${route} ${method} ${status}`;
    let validate = this.compiled.get(key);
    if (!validate) {
      validate = this.ajv.compile(closed(json.schema, 'openapi') as Json);
      this.compiled.set(key, validate);
    }
    if (validate(JSON.parse(payload))) return null;
    const errors = (validate.errors ?? []).slice(0, 5).map((e) => `${e.instancePath || '/'} ${e.message}${e.params && 'additionalProperty' in e.params ? ` (${String(e.params.additionalProperty)})` : ''}`);
    return `${name} ${status} does not match its schema: ${errors.join('; ')}`;
  }
}

/**
 * Holds every JSON answer the suite's apps send to the document's schema for that operation and
 * status, and records which operations were answered, so the document cannot drift from the code.
 * Routes merged later are checked the same way: the check reads the document, not a list.
 */
export class OpenApiDrift {
  readonly failures: string[] = [];
  readonly exercised = new Set<string>();

  attach(app: FastifyInstance): void {
    let checker: Checker | null = null;
    app.addHook('onSend', async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
      const operationId = request.routeOptions.config.operationId;
      const url = request.routeOptions.url;
      if (!operationId || !url) return payload;
      checker ??= new Checker(app.openapiDocument());
      const judge = (body: unknown) => {
        const failure = checker!.check(request.method, url, reply.statusCode, String(reply.getHeader('content-type') ?? ''), body);
        if (failure) {
          if (!this.failures.includes(failure)) this.failures.push(failure);
        } else {
          this.exercised.add(operationId);
        }
      };
      if (!(payload instanceof Readable)) {
        judge(payload);
        return payload;
      }
      // A streamed answer (an export) is judged whole once it has all gone by, on the bytes the client got.
      const chunks: Buffer[] = [];
      const tap = new PassThrough();
      tap.on('data', (chunk: Buffer | string) => chunks.push(Buffer.from(chunk)));
      tap.on('end', () => judge(Buffer.concat(chunks).toString('utf8')));
      return payload.pipe(tap);
    });
  }

  /** Operations of the document that no test got a documented answer from. */
  unexercised(doc: Json): string[] {
    const ids = Object.values(doc.paths as Record<string, Record<string, Json>>)
      .flatMap((ops) => Object.values(ops).map((op) => op.operationId as string | undefined));
    return ids.filter((id): id is string => id !== undefined && !this.exercised.has(id)).sort();
  }
}

function testFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(full);
    return entry.name.endsWith('.test.ts') ? [full] : [];
  });
}

/** True when this run loaded every test file without a filter: only then must every operation be answered. */
export function isWholeSuite(root: Mocha.Suite): boolean {
  if (process.argv.some((arg) => /^(--grep|-g|--fgrep|-f|--invert)(=|$)/.test(arg))) return false;
  const loaded = new Set(root.suites.map((s) => s.file).filter((f): f is string => typeof f === 'string').map((f) => path.resolve(f)));
  return testFiles(path.resolve(__dirname, '..')).every((file) => loaded.has(file));
}
