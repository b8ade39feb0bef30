import fs from 'node:fs';
import path from 'node:path';
import { FastifyInstance, RouteOptions } from 'fastify';
import { AnySchema } from 'yup';
import { PUBLIC_PREFIX } from './public-rate-limit';
import { errorEnvelope, proofErrorBody } from './responses';
import type { Domain } from './route-traits';

type JsonSchema = Record<string, unknown>;

interface Description {
  type: string;
  optional?: boolean;
  nullable?: boolean;
  oneOf?: unknown[];
  tests?: Array<{ name?: string; params?: Record<string, unknown> }>;
  fields?: Record<string, Description>;
  innerType?: Description;
  meta?: {
    open?: boolean; description?: string; format?: string; name?: string; example?: unknown;
    jsonSchema?: JsonSchema; contentType?: string; noContent?: boolean; retryAfter?: boolean;
  };
  default?: unknown;
}

const LENGTH_KEYS: Record<string, [string, string]> = {
  string: ['minLength', 'maxLength'],
  array: ['minItems', 'maxItems'],
  number: ['minimum', 'maximum'],
  integer: ['minimum', 'maximum'],
};

/**
 * Where a schema is used: request objects without `strictObject` take any property; response objects
 * leave additionalProperties unsaid, so clients keep working when a field is added (the suite's drift
 * check still holds answers to the fields listed).
 */
type Mode = 'request' | 'response';

/** Named schemas collected while the document is built: #/components/schemas. */
type Components = Record<string, JsonSchema>;

/** JSON Schema for a yup description: the route schemas are the single source of the document. */
export function toJsonSchema(d: Description, components?: Components, mode: Mode = 'request'): JsonSchema {
  const name = d.meta?.name;
  if (name && components) {
    const { name: _name, description, ...meta } = d.meta ?? {};
    const body = toJsonSchema({ ...d, nullable: false, meta }, components, mode);
    const known = components[name];
    if (known && JSON.stringify(known) !== JSON.stringify(body)) throw new Error(`two different schemas are named ${name}`);
    components[name] = body;
    const ref: JsonSchema = { $ref: `#/components/schemas/${name}` };
    const out: JsonSchema = d.nullable ? { oneOf: [ref, { type: 'null' }] } : ref;
    if (description) out.description = description;
    return out;
  }
  if (d.meta?.jsonSchema) {
    const out: JsonSchema = { ...d.meta.jsonSchema };
    if (d.meta.description) out.description = d.meta.description;
    return out;
  }
  const tests = d.tests ?? [];
  const has = (test: string) => tests.some((t) => t.name === test);
  const out: JsonSchema = {};
  let type = d.type === 'mixed' ? undefined : d.type;
  if (type === 'number' && has('integer')) type = 'integer';
  if (type === 'date') {
    type = 'string';
    out.format = 'date-time';
  }
  if (type === 'object') {
    const fields = d.fields ?? {};
    out.properties = Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, toJsonSchema(v, components, mode)]));
    const required = Object.entries(fields).filter(([, v]) => v.optional === false).map(([k]) => k);
    if (required.length > 0) out.required = required;
    if (d.meta?.open) {
      out.additionalProperties = true;
      delete out.properties;
    } else if (has('no-unknown-properties')) {
      out.additionalProperties = false;
    } else if (mode === 'request') {
      out.additionalProperties = true;
    }
  }
  if (type === 'array' && d.innerType) out.items = toJsonSchema(d.innerType, components, mode);
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
  if (values.length > 0) out.enum = d.nullable ? [...values, null] : values;
  if (d.default !== undefined && typeof d.default !== 'object') out.default = d.default;
  if (d.meta?.format) out.format = d.meta.format;
  if (d.meta?.description) out.description = d.meta.description;
  if (d.meta?.example !== undefined) out.examples = [d.meta.example];
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
  400: 'VALIDATION_FAILED: the request does not match the schema', 401: 'UNAUTHORIZED', 404: 'NOT_FOUND', 409: 'CONFLICT', 410: 'GONE',
  413: 'PAYLOAD_TOO_LARGE', 415: 'UNSUPPORTED_MEDIA_TYPE', 416: 'Range Not Satisfiable',
  422: 'Unprocessable', 429: 'RATE_LIMITED', 503: 'SERVICE_UNAVAILABLE',
};

function errorRef(proof: boolean): JsonSchema {
  return { $ref: `#/components/schemas/${proof ? 'ProofErrorBody' : 'ErrorEnvelope'}` };
}

const SCHEMES: Record<string, string[]> = {
  key: ['serviceKey'],
  session: ['workspaceSession'],
  identity: ['endUserToken'],
  'key-or-identity': ['serviceKey', 'endUserToken'],
};

/** The tags: the domains routes declare in `config.tag` (api/plugins/route-traits.ts). */
const DOMAINS: Array<{ name: Domain; description: string }> = [
  { name: 'platform', description: 'Health, key identity, end-user tokens, workspace sessions and service keys, identity merge' },
  { name: 'customer-loop', description: 'Signals, threads, features and votes, releases, the in-app inbox' },
  { name: 'proof', description: 'Proof submissions, items and versions, approval, consent, revocation, placements, render manifests, receipts, exports' },
  { name: 'collection', description: 'Collecting stories: the customer routes (`{error, code}` errors), flows, questions, consent templates, requests, ' +
    'interviews' },
  { name: 'integrations', description: 'Value events, hooks, payment connectors, rewards, CRM deals, sources, the video host, automation templates' },
  { name: 'ai', description: 'Proof AI operations: summaries, ask drafts, case studies' },
  { name: 'webhooks', description: 'Webhook endpoints and the delivery log' },
  {
    name: 'rooms',
    description: 'Rooms API, its own contract version 1.5 (every answer carries `service-rooms-version: 1.5`): rooms, members, messages, the event log and ' +
      'catch-up, canvas, agent runs and approvals',
  },
];

function describe(schema: unknown): Description | undefined {
  return schema ? ((schema as AnySchema).describe() as unknown as Description) : undefined;
}

function parameters(where: 'query' | 'path', schema: unknown, components: Components): JsonSchema[] {
  const d = describe(schema);
  return Object.entries(d?.fields ?? {}).map(([name, field]) => {
    const out: JsonSchema = {
      name, in: where, required: where === 'path' || field.optional === false, schema: toJsonSchema(field, components),
    };
    if (field.meta?.description) out.description = field.meta.description;
    return out;
  });
}

function errorResponse(description: string, proof: boolean, headers?: string[]): JsonSchema {
  const out: JsonSchema = { description, content: { 'application/json': { schema: errorRef(proof) } } };
  if (headers) {
    out.headers = Object.fromEntries(headers.map((h) => [h, { description: 'seconds to wait before retrying', schema: { type: 'integer' } }]));
  }
  return out;
}

/** The error statuses a route can answer by its auth, input and idempotency; a route adds its own in schema.response. */
function impliedErrors(route: RouteOptions, config: Record<string, unknown>, schema: Record<string, unknown>): Record<string, JsonSchema> {
  const auth = (config.auth as string | undefined) ?? 'public';
  const proof = config.customer === true;
  const out: Record<string, JsonSchema> = {
    400: errorResponse('VALIDATION_FAILED: the request (path, query, headers or body) does not match the schema', proof),
  };
  const endUserCounted = Boolean(config.endUserWindow);
  if (auth === 'key' || auth === 'key-or-identity') {
    out[401] = errorResponse('INVALID_API_KEY: the credential is missing, malformed, unknown, revoked or expired', proof);
    out[403] = errorResponse(`INSUFFICIENT_SCOPE${config.scope ? ` (needs ${config.scope})` : ''}, ENVIRONMENT_SCOPE_MISMATCH, PRODUCT_SCOPE_REQUIRED or PRODUCT_SCOPE_UNAVAILABLE`, proof);
    const who = auth === 'key-or-identity' && endUserCounted ? 'the key, or the end user,' : 'the key';
    out[429] = errorResponse(`RATE_LIMITED: more requests this minute than ${who} may make`, proof, ['Retry-After']);
  } else if (auth === 'identity') {
    out[401] = errorResponse('The end-user token is missing, malformed, badly signed, expired or already used', proof);
    out[403] = errorResponse('KEY_AUDIENCE_MISMATCH (a service key was sent) or PRODUCT_SCOPE_UNAVAILABLE', proof);
    if (endUserCounted) {
      out[429] = errorResponse('RATE_LIMITED: more requests this minute than an end user may make (RATE_LIMIT_PER_MINUTE)', proof, ['Retry-After']);
    }
  } else if (auth === 'session') {
    out[401] = errorResponse('The workspace session is missing, malformed or expired', proof);
    const refusal = config.keyRefusal === 'HUMAN_APPROVAL_REQUIRED' ? 'HUMAN_APPROVAL_REQUIRED (a service key was sent)' : 'FORBIDDEN (a service key was sent)';
    const roles = Array.isArray(config.roles) ? `, a role other than ${(config.roles as string[]).join(' or ')}` : '';
    out[403] = errorResponse(`${refusal}, or FORBIDDEN: no x-csrf-token on a write${roles}`, proof);
    if (config.identityRefusal && endUserCounted) {
      out[429] = errorResponse('RATE_LIMITED: more requests this minute than an end user may make (RATE_LIMIT_PER_MINUTE)', proof, ['Retry-After']);
    }
  }
  if (String(route.url).startsWith(PUBLIC_PREFIX)) {
    out[429] = errorResponse('RATE_LIMITED: more requests this minute from this client address than PUBLIC_RATE_LIMIT_PER_MINUTE', proof, ['Retry-After']);
  }
  if (schema.params) out[404] = errorResponse('NOT_FOUND: no such resource for this tenant (another tenant\'s id answers the same)', proof);
  if (config.idempotency) {
    out[409] = errorResponse('IDEMPOTENCY_IN_PROGRESS (Retry-After) or the Idempotency-Key was used for a different request', proof, ['Retry-After']);
  }
  if (proof && schema.body) {
    // The /api/proof body parser refuses oversized and non-JSON bodies before the route runs.
    out[413] = errorResponse('TOO_LARGE: the body is larger than the route accepts', proof);
    out[415] = errorResponse('UNSUPPORTED_MEDIA_TYPE: this content-type is not accepted here', proof);
  }
  out[503] = errorResponse('SERVICE_UNAVAILABLE: a dependency (PostgreSQL, Temporal) is unavailable, or a concurrent change got in the way; retry', proof,
    ['Retry-After']);
  return out;
}

function declaredResponse(status: string, d: Description | undefined, components: Components, proof: boolean): JsonSchema {
  const described: JsonSchema = { description: d?.meta?.description ?? STATUS_TEXT[status] ?? status };
  if (!d || d.meta?.noContent) return described;
  // Every 429 says when to retry, whether implied by the route's auth or declared by the route.
  if (d.meta?.name === 'ErrorEnvelope') {
    return errorResponse(described.description as string, proof, d.meta.retryAfter || status === '429' ? ['Retry-After'] : undefined);
  }
  if (d.meta?.contentType) {
    described.content = { [d.meta.contentType]: { schema: { type: 'string', ...(d.meta.format ? { format: d.meta.format } : {}) } } };
    return described;
  }
  described.content = { 'application/json': { schema: toJsonSchema(d, components, 'response') } };
  return described;
}

function operation(route: RouteOptions, components: Components): JsonSchema {
  const config = (route.config ?? {}) as Record<string, unknown>;
  const schema = (route.schema ?? {}) as Record<string, unknown>;
  const body = describe(schema.body);
  const auth = (config.auth as string | undefined) ?? 'public';
  const declared = Object.entries((schema.response ?? {}) as Record<string, unknown>);
  const responses: JsonSchema = impliedErrors(route, config, schema);
  for (const [status, s] of declared) responses[status] = declaredResponse(status, describe(s), components, config.customer === true);
  if (config.htmlError) {
    // A form posted without JavaScript gets its errors as a page (api/plugins/errors.ts).
    for (const [status, response] of Object.entries(responses)) {
      if (Number(status) >= 400) (response as JsonSchema).content = { 'text/html': { schema: { type: 'string' } } };
    }
  }
  const notes: string[] = [];
  if (config.scope) notes.push(`Service key scope: \`${config.scope}\`.`);
  if (Array.isArray(config.roles)) notes.push(`Workspace roles: ${(config.roles as string[]).join(', ')}.`);
  if (auth === 'public') notes.push('Public: no credential.');
  const op: JsonSchema = {
    operationId: config.operationId,
    summary: config.summary,
    // A route that declares no domain has no tag, which the contract test refuses.
    tags: config.tag ? [config.tag] : [],
    parameters: [...parameters('path', schema.params, components), ...parameters('query', schema.querystring, components)],
    responses: Object.fromEntries(Object.entries(responses).sort(([a], [b]) => a.localeCompare(b))),
  };
  if (notes.length > 0) op.description = notes.join(' ');
  const scopes = config.scope ? [String(config.scope)] : [];
  op.security = (SCHEMES[auth] ?? []).map((scheme) => ({ [scheme]: scheme === 'serviceKey' ? scopes : [] }));
  if (config.scope) op['x-required-scope'] = config.scope;
  if (config.idempotency) {
    (op.parameters as JsonSchema[]).push({
      name: 'Idempotency-Key', in: 'header', required: config.idempotency === 'required',
      description: 'a repeat replays the stored success with `idempotent-replayed: true` (24 hours)',
      schema: { type: 'string', pattern: '^[A-Za-z0-9._:-]{8,200}$' },
    });
  }
  if (body) {
    op.requestBody = { required: body.optional === false, content: { 'application/json': { schema: toJsonSchema(body, components) } } };
  }
  if ((op.parameters as JsonSchema[]).length === 0) delete op.parameters;
  return op;
}

/** The OpenAPI 3.1 document of the given routes. */
export function buildDocument(routes: RouteOptions[], version: string, serverUrl: string): JsonSchema {
  const components: Components = {};
  toJsonSchema(describe(errorEnvelope)!, components, 'response');
  toJsonSchema(describe(proofErrorBody)!, components, 'response');
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const route of routes) {
    const url = String(route.url).replace(/:([A-Za-z]+)/g, '{$1}');
    for (const method of [route.method].flat()) {
      if (method === 'HEAD') continue;
      (paths[url] ??= {})[method.toLowerCase()] = operation(route, components);
    }
  }
  const used = new Set(Object.values(paths).flatMap((ops) => Object.values(ops).flatMap((op) => op.tags as string[])));
  const tags = [
    ...DOMAINS.filter((d) => used.has(d.name)).map(({ name, description }) => ({ name, description })),
  ];
  return {
    openapi: '3.1.0',
    info: {
      title: 'Customer Loop and Proof Service',
      version,
      description: 'Customer feedback and consented customer proof, with signed webhooks. Errors answer `{ error: { code, message, requestId, details } }`.',
      license: { name: 'UNLICENSED', identifier: 'LicenseRef-Proprietary' },
    },
    servers: [{ url: serverUrl, description: '`npm start` on this machine; a deployment serves the same paths at its own origin' }],
    tags,
    paths,
    components: {
      securitySchemes: {
        serviceKey: { type: 'http', scheme: 'bearer', description: 'service key: svk_ + 43 characters; scopes as listed per operation' },
        endUserToken: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT (HS256, kid = product identity key)',
          description: 'a signed end-user token minted by the product\'s backend' },
        workspaceSession: { type: 'apiKey', in: 'cookie', name: 'sv_session', description: 'a teammate\'s session; writes also send x-csrf-token' },
      },
      schemas: Object.fromEntries(Object.entries(components).sort(([a], [b]) => a.localeCompare(b))),
    },
  };
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The OpenAPI document of this app's routes (built once, after they are all added). */
    openapiDocument(): JsonSchema;
  }
}

/**
 * Collects every route as it is added and serves the OpenAPI 3.1 document and a Swagger UI page.
 * Must be registered before the routes it describes.
 */
export function registerOpenApi(app: FastifyInstance, version: string, serverUrl: string): void {
  const routes: RouteOptions[] = [];
  app.addHook('onRoute', (route) => {
    // Plugins' own routes (the CORS preflight) mark themselves with schema.hide.
    const hidden = (route.config as Record<string, unknown> | undefined)?.hidden || (route.schema as { hide?: boolean } | undefined)?.hide;
    if (!hidden) routes.push(route);
  });
  let document: JsonSchema | null = null;
  app.decorate('openapiDocument', () => (document ??= buildDocument(routes, version, serverUrl)));

  const uiDir: string = require('swagger-ui-dist').getAbsoluteFSPath();
  const assets: Record<string, { type: string; file: string }> = {
    'swagger-ui.css': { type: 'text/css', file: 'swagger-ui.css' },
    'swagger-ui-bundle.js': { type: 'application/javascript', file: 'swagger-ui-bundle.js' },
  };
  const page = `<!doctype html><html><head><meta charset="utf-8"><title>Customer Loop and Proof Service API</title>
<link rel="stylesheet" href="/docs/assets/swagger-ui.css"></head><body><div id="ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script>SwaggerUIBundle({ url: '/openapi.json', dom_id: '#ui' });</script></body></html>`;

  app.get('/openapi.json', { config: { hidden: true } }, async () => app.openapiDocument());
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
