import fs from 'node:fs';
import path from 'node:path';
import { FastifyInstance, RouteOptions } from 'fastify';
import { AnySchema } from 'yup';

type JsonSchema = Record<string, unknown>;

interface Description {
  type: string;
  optional?: boolean;
  nullable?: boolean;
  oneOf?: unknown[];
  tests?: Array<{ name?: string; params?: Record<string, unknown> }>;
  fields?: Record<string, Description>;
  innerType?: Description;
  meta?: { open?: boolean; description?: string; format?: string };
  default?: unknown;
}

const LENGTH_KEYS: Record<string, [string, string]> = {
  string: ['minLength', 'maxLength'],
  array: ['minItems', 'maxItems'],
  number: ['minimum', 'maximum'],
  integer: ['minimum', 'maximum'],
};

/** JSON Schema for a yup description: the request schemas are the single source of the document. */
export function toJsonSchema(d: Description): JsonSchema {
  const tests = d.tests ?? [];
  const has = (name: string) => tests.some((t) => t.name === name);
  const out: JsonSchema = {};
  let type = d.type === 'mixed' ? undefined : d.type;
  if (type === 'number' && has('integer')) type = 'integer';
  if (type === 'date') {
    type = 'string';
    out.format = 'date-time';
  }
  if (type === 'object') {
    const fields = d.fields ?? {};
    out.properties = Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, toJsonSchema(v)]));
    const required = Object.entries(fields).filter(([, v]) => v.optional === false).map(([k]) => k);
    if (required.length > 0) out.required = required;
    out.additionalProperties = d.meta?.open === true || !has('no-unknown-properties') ? true : false;
    if (d.meta?.open) delete out.properties;
  }
  if (type === 'array' && d.innerType) out.items = toJsonSchema(d.innerType);
  if (type) out.type = d.nullable ? [type, 'null'] : type;
  for (const test of tests) {
    const bounds = type ? LENGTH_KEYS[type] : undefined;
    if (test.name === 'min' && bounds) out[bounds[0]] = test.params?.min;
    if (test.name === 'max' && bounds) out[bounds[1]] = test.params?.max;
    if (test.name === 'length' && type === 'array') out.minItems = out.maxItems = test.params?.length;
    if (test.name === 'email') out.format = 'email';
    if (test.name === 'url') out.format = 'uri';
    if (test.name === 'matches') out.pattern = (test.params?.regex as RegExp).source;
  }
  const values = (d.oneOf ?? []).filter((v) => v !== undefined && v !== null);
  if (values.length > 0) out.enum = values;
  if (d.default !== undefined && typeof d.default !== 'object') out.default = d.default;
  if (d.meta?.format) out.format = d.meta.format;
  if (d.meta?.description) out.description = d.meta.description;
  return out;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    summary?: string;
    /** Unique across the API; the generated client's method name. */
    operationId?: string;
  }
}

const STATUS_TEXT: Record<string, string> = {
  200: 'OK', 201: 'Created', 202: 'Accepted', 204: 'No Content', 206: 'Partial Content', 302: 'Found', 304: 'Not Modified',
};

const ERROR_ENVELOPE: JsonSchema = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message', 'requestId', 'details'],
      properties: {
        code: { type: 'string' }, message: { type: 'string' }, requestId: { type: 'string' }, details: {},
      },
    },
  },
};

const SECURITY: Record<string, Array<Record<string, string[]>>> = {
  key: [{ serviceKey: [] }],
  session: [{ workspaceSession: [] }],
  identity: [{ endUserToken: [] }],
  'key-or-identity': [{ serviceKey: [] }, { endUserToken: [] }],
};

function describe(schema: unknown): Description | undefined {
  return schema ? ((schema as AnySchema).describe() as unknown as Description) : undefined;
}

function parameters(where: 'query' | 'path', schema: unknown): JsonSchema[] {
  const d = describe(schema);
  return Object.entries(d?.fields ?? {}).map(([name, field]) => ({
    name, in: where, required: where === 'path' || field.optional === false, schema: toJsonSchema(field),
  }));
}

function operation(route: RouteOptions): JsonSchema {
  const config = (route.config ?? {}) as Record<string, unknown>;
  const schema = (route.schema ?? {}) as Record<string, unknown>;
  const body = describe(schema.body);
  const auth = (config.auth as string | undefined) ?? 'public';
  const declared = Object.entries((schema.response ?? {}) as Record<string, unknown>);
  const responses: JsonSchema = declared.length === 0
    ? { '2XX': { description: 'success: `{ data: ... }`, lists also carry `nextCursor`' } }
    : Object.fromEntries(declared.map(([status, s]) => {
      const d = describe(s);
      const described: JsonSchema = { description: d?.meta?.description ?? STATUS_TEXT[status] ?? status };
      if (d) described.content = { 'application/json': { schema: toJsonSchema(d) } };
      return [status, described];
    }));
  responses.default = { description: 'error envelope', content: { 'application/json': { schema: ERROR_ENVELOPE } } };
  const op: JsonSchema = {
    operationId: config.operationId,
    summary: config.summary,
    tags: [String(route.url).split('/').filter(Boolean).slice(0, 3).join('/')],
    parameters: [...parameters('path', schema.params), ...parameters('query', schema.querystring)],
    responses,
  };
  if (SECURITY[auth]) op.security = SECURITY[auth];
  if (config.scope) op['x-required-scope'] = config.scope;
  if (config.idempotency) {
    (op.parameters as JsonSchema[]).push({
      name: 'Idempotency-Key', in: 'header', required: config.idempotency === 'required',
      schema: { type: 'string', pattern: '^[A-Za-z0-9._:-]{8,200}$' },
    });
  }
  if (body) op.requestBody = { required: body.optional === false, content: { 'application/json': { schema: toJsonSchema(body) } } };
  return op;
}

/**
 * Collects every route as it is added and serves the OpenAPI 3.1 document and a Swagger UI page.
 * Must be registered before the routes it describes.
 */
export function registerOpenApi(app: FastifyInstance, version: string): void {
  const routes: RouteOptions[] = [];
  app.addHook('onRoute', (route) => {
    if (!(route.config as Record<string, unknown> | undefined)?.hidden) routes.push(route);
  });
  let document: JsonSchema | null = null;
  const build = (): JsonSchema => {
    const paths: Record<string, Record<string, JsonSchema>> = {};
    for (const route of routes) {
      const url = String(route.url).replace(/:([A-Za-z]+)/g, '{$1}');
      for (const method of [route.method].flat()) {
        if (method === 'HEAD') continue;
        (paths[url] ??= {})[method.toLowerCase()] = operation(route);
      }
    }
    return {
      openapi: '3.1.0',
      info: { title: 'Customer Loop and Proof Service', version },
      paths,
      components: {
        securitySchemes: {
          serviceKey: { type: 'http', scheme: 'bearer', description: 'svk_ + 43 characters' },
          endUserToken: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT (HS256, kid = product identity key)' },
          workspaceSession: { type: 'apiKey', in: 'cookie', name: 'sv_session', description: 'writes also send x-csrf-token' },
        },
        schemas: { ErrorEnvelope: ERROR_ENVELOPE },
      },
    };
  };

  const uiDir: string = require('swagger-ui-dist').getAbsoluteFSPath();
  const assets: Record<string, { type: string; file: string }> = {
    'swagger-ui.css': { type: 'text/css', file: 'swagger-ui.css' },
    'swagger-ui-bundle.js': { type: 'application/javascript', file: 'swagger-ui-bundle.js' },
  };
  const page = `<!doctype html><html><head><meta charset="utf-8"><title>Customer Loop and Proof Service API</title>
<link rel="stylesheet" href="/docs/assets/swagger-ui.css"></head><body><div id="ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script>SwaggerUIBundle({ url: '/openapi.json', dom_id: '#ui' });</script></body></html>`;

  app.get('/openapi.json', { config: { hidden: true } }, async () => (document ??= build()));
  app.get('/docs', { config: { hidden: true } }, async (_req, reply) => reply.type('text/html').send(page));
  app.get<{ Params: { file: string } }>('/docs/assets/:file', { config: { hidden: true } }, async (request, reply) => {
    if (!Object.hasOwn(assets, request.params.file)) return reply.callNotFound();
    const asset = assets[request.params.file];
    return reply.type(asset.type).send(fs.createReadStream(path.join(uiDir, asset.file)));
  });
}

declare module 'fastify' {
  interface FastifyContextConfig {
    hidden?: boolean;
  }
}
