import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { CLIENT_DIR, DOCUMENT_FILE, SCHEMA_FILE, renderClient } from '../../clients/typescript/generate';
import { ctx } from '../support/root-hooks';

type Operation = {
  operationId?: string; summary?: string; tags?: string[]; security?: unknown[];
  parameters?: Array<{ name: string; schema: Record<string, unknown> }>;
  responses: Record<string, { content?: Record<string, { schema?: unknown }> }>;
};

function operations(): Array<[string, Operation]> {
  const paths = ctx.app.openapiDocument().paths as Record<string, Record<string, Operation>>;
  return Object.entries(paths).flatMap(([url, ops]) => Object.entries(ops).map(([method, op]): [string, Operation] => [`${method.toUpperCase()} ${url}`, op]));
}

describe('OpenAPI contract', () => {
  it('every operation has a unique camelCase operationId, a summary, a domain tag, security and a documented answer', () => {
    const ids = new Set<string>();
    for (const [name, op] of operations()) {
      assert.match(op.operationId ?? '', /^[a-z][A-Za-z0-9]+$/, `${name}: operationId`);
      assert.ok(!ids.has(op.operationId!), `${name}: operationId ${op.operationId} is not unique`);
      ids.add(op.operationId!);
      assert.ok(op.summary, `${name}: summary`);
      assert.equal(op.tags?.length, 1, `${name}: one tag`);
      assert.ok(Array.isArray(op.security), `${name}: security (an empty list on public routes)`);
      const success = Object.keys(op.responses).filter((s) => s.startsWith('2'));
      const documented = success.length > 0 ? success : Object.keys(op.responses).filter((s) => op.responses[s].content);
      assert.ok(documented.length > 0, `${name}: no documented answer`);
      for (const status of success) {
        const content = op.responses[status].content;
        if (content) assert.ok(Object.values(content).every((c) => c.schema), `${name} ${status}: schema`);
      }
      assert.ok(op.responses['400'] && op.responses['503'], `${name}: 400 and 503 are documented`);
    }
    assert.ok(ids.size >= 80, `only ${ids.size} operations`);
  });

  it('public routes need no credential; key routes name their scope', () => {
    const ops = Object.fromEntries(operations());
    assert.deepEqual(ops['GET /api/public/proof/render/{id}'].security, []);
    assert.deepEqual(ops['GET /healthz'].security, []);
    assert.deepEqual(ops['GET /api/v1/signals'].security, [{ serviceKey: ['service:signals:read'] }]);
    assert.equal((ops['GET /api/v1/signals'] as Record<string, unknown>)['x-required-scope'], 'service:signals:read');
    assert.ok(ops['GET /api/v1/signals'].responses['429'], 'a key route documents RATE_LIMITED');
  });

  it('list parameters are typed: status and expand are arrays of named values, not "any"', () => {
    const ops = Object.fromEntries(operations());
    const param = (op: string, name: string) => ops[op].parameters!.find((p) => p.name === name)!.schema;
    const status = param('GET /api/v1/proof/items', 'status');
    assert.equal(status.type, 'array');
    assert.ok((status.items as { enum: string[] }).enum.includes('approved'));
    assert.deepEqual((param('GET /api/v1/proof/items/{id}', 'expand').items as { enum: string[] }).enum, ['versions', 'consent']);
    assert.deepEqual((param('GET /api/v1/proof/placements/{id}', 'expand').items as { enum: string[] }).enum, ['items']);
    for (const [name, op] of operations()) {
      for (const p of op.parameters ?? []) assert.ok(Object.keys(p.schema).length > 0, `${name}: parameter ${p.name} has no type`);
    }
  });

  it('the committed document and the generated client types are what the code declares (npm run client:generate)', async function () {
    this.timeout(60_000);
    const { document, schema } = await renderClient();
    assert.ok(fs.readFileSync(DOCUMENT_FILE, 'utf8') === document, 'clients/typescript/openapi.json is stale: run npm run client:generate');
    assert.ok(fs.readFileSync(SCHEMA_FILE, 'utf8') === schema, 'clients/typescript/src/schema.ts is stale: run npm run client:generate');
    assert.deepEqual(JSON.parse(document), ctx.app.openapiDocument());
  });

  it('passes @redocly/cli lint with the recommended ruleset: no errors, no warnings', async function () {
    this.timeout(120_000);
    const cli = path.resolve(__dirname, '../../node_modules/.bin/redocly');
    const { stdout } = await promisify(execFile)(cli, ['lint', 'openapi.json', '--format', 'json'], {
      cwd: CLIENT_DIR,
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
      maxBuffer: 16 * 1024 * 1024,
    }).catch((err: { stdout?: string; message: string }) => {
      if (err.stdout) return { stdout: err.stdout };
      throw err;
    });
    const report = JSON.parse(stdout) as { totals: { errors: number; warnings: number }; problems: Array<{ ruleId: string; message: string }> };
    const problems = report.problems.map((p) => `${p.ruleId}: ${p.message}`);
    assert.deepEqual({ errors: report.totals.errors, warnings: report.totals.warnings, problems }, { errors: 0, warnings: 0, problems: [] });
  });
});
