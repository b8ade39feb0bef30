import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { FastifyInstance } from 'fastify';
import ts from 'typescript';
import { number, string } from 'yup';
import { strictObject } from '../../api/plugins/validation';
import { Tenant, call, createTenant, errorCode, withKey } from '../support/fixtures';
import { ctx } from '../support/root-hooks';
import { PROOF_API_ROUTE } from '../../api/plugins/route-traits';

describe('API conventions', () => {
  let tenant: Tenant;
  let app: FastifyInstance;
  const post = (url: string, payload: string | object, headers: Record<string, string> = {}) =>
    call(withKey(tenant.key, { method: 'POST', url, payload, headers: { 'content-type': 'application/json', ...headers } }), app);

  before(async () => {
    tenant = await createTenant(['service:proof:write']);
    const body = strictObject({ text: string().required(), count: number().integer(), nested: strictObject({ a: string() }) }).required();
    app = await ctx.buildApp({}, (a) => {
      a.post('/api/v1/proof/echo', { schema: { body }, config: { tag: 'proof', ...PROOF_API_ROUTE, auth: 'key', scope: 'service:proof:write' } },
        async (req) => ({ data: req.body }));
      a.post('/api/v1/other/echo', { config: { auth: 'key' } }, async (req) => ({ data: req.body }));
      a.get('/api/v1/proof/boom', { config: { auth: 'key' } }, async () => {
        throw new Error('secret detail: password=hunter2');
      });
    });
  });

  it('every response carries x-request-id, matching the envelope\'s requestId', async () => {
    const res = await call({ method: 'GET', url: '/api/v1/auth/whoami' });
    const id = res.headers['x-request-id'] as string;
    assert.match(id, /^req_[0-9a-f]{12}[0-9a-z]+$/);
    assert.equal(res.json().error.requestId, id);
    const next = (await call({ method: 'GET', url: '/api/v1/auth/whoami' })).headers['x-request-id'] as string;
    assert.notEqual(next, id, 'every request has an id of its own');
    assert.ok((await call({ method: 'GET', url: '/healthz' })).headers['x-request-id']);
  });

  it('echoes a sane incoming x-request-id and replaces an unsafe one', async () => {
    const sane = await call({ method: 'GET', url: '/nowhere', headers: { 'x-request-id': 'abc-123.def:9' } });
    assert.equal(sane.headers['x-request-id'], 'abc-123.def:9');
    const unsafe = await call({ method: 'GET', url: '/nowhere', headers: { 'x-request-id': '<script>alert(1)</script>' } });
    assert.match(unsafe.headers['x-request-id'] as string, /^req_/);
    const long = await call({ method: 'GET', url: '/nowhere', headers: { 'x-request-id': 'a'.repeat(129) } });
    assert.match(long.headers['x-request-id'] as string, /^req_/);
  });

  it('an unknown route answers 404 NOT_FOUND in the envelope', async () => {
    const res = await call({ method: 'GET', url: '/api/v1/nothing-here' });
    assert.equal(res.statusCode, 404);
    assert.equal(errorCode(res), 'NOT_FOUND');
  });

  const badBodies: Array<[string, string, Record<string, string>?]> = [
    ['malformed JSON', '{"text": '],
    ['an empty body', ''],
    ['a __proto__ key', '{"text":"x","__proto__":{"admin":true}}'],
    ['a constructor.prototype key', '{"text":"x","constructor":{"prototype":{"admin":true}}}'],
    ['nesting 10,000 levels deep', `${'['.repeat(10_000)}${']'.repeat(10_000)}`],
    ['a JSON array instead of an object', '[1,2,3]'],
    ['a JSON string instead of an object', '"text"'],
    ['text/plain', 'text=hello', { 'content-type': 'text/plain' }],
    ['form encoding', 'text=hello', { 'content-type': 'application/x-www-form-urlencoded' }],
    ['an unknown property', '{"text":"x","admin":true}'],
    ['an unknown nested property', '{"text":"x","nested":{"a":"1","b":"2"}}'],
    ['a string where an integer belongs', '{"text":"x","count":"10"}'],
    ['a number where a string belongs', '{"text":10}'],
    ['a NUL character in a string', '{"text":"a\\u0000b"}'],
    ['a NUL character in a property name', '{"text":"x","nested":{"a\\u0000":"1"}}'],
    ['a lone surrogate in a string (no RFC 8785 form)', '{"text":"a\\ud800b"}'],
    ['a lone surrogate in a property name', '{"text":"x","nested":{"\\udc00":"1"}}'],
  ];
  for (const [name, payload, headers] of badBodies) {
    it(`answers 400 VALIDATION_FAILED, never a 500, for ${name}`, async () => {
      const res = await post('/api/v1/proof/echo', payload, headers);
      assert.equal(res.statusCode, 400, res.body);
      assert.equal(errorCode(res), 'VALIDATION_FAILED');
      assert.ok(Array.isArray(res.json().error.details));
      for (const d of res.json().error.details) assert.equal(typeof d.path, 'string');
    });
  }

  it('reports each unknown property by its path', async () => {
    const res = await post('/api/v1/proof/echo', '{"text":"x","admin":true,"nested":{"b":"2"}}');
    const paths = res.json().error.details.map((d: { path: string }) => d.path).sort();
    assert.deepEqual(paths, ['admin', 'nested.b']);
  });

  it('a valid body passes unchanged', async () => {
    const res = await post('/api/v1/proof/echo', { text: 'hello', count: 10, nested: { a: 'b' } });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json().data, { text: 'hello', count: 10, nested: { a: 'b' } });
  });

  it('proof bodies above 256 KB answer 400 VALIDATION_FAILED; just under passes', async () => {
    const under = JSON.stringify({ text: 'x'.repeat(256 * 1024 - 20) });
    assert.ok(under.length <= 256 * 1024);
    assert.equal((await post('/api/v1/proof/echo', under)).statusCode, 200);
    const over = await post('/api/v1/proof/echo', JSON.stringify({ text: 'x'.repeat(256 * 1024) }));
    assert.equal(over.statusCode, 400);
    assert.equal(errorCode(over), 'VALIDATION_FAILED');
    const elsewhere = await post('/api/v1/other/echo', JSON.stringify({ text: 'x'.repeat(256 * 1024) }));
    assert.equal(elsewhere.statusCode, 200, 'the 256 KB limit is for proof bodies');
  });

  it('answers malformed URLs in the envelope with the request id', async () => {
    for (const url of ['/api/workspace/webhooks/endpoints/%zz', '/api/workspace/keys?limit=%00', '/api/workspace/webhooks/endpoints/%00',
      `/api/workspace/webhooks/endpoints/${'a'.repeat(250)}`]) {
      const res = await call({ method: 'GET', url, headers: { cookie: tenant.owner.cookie } });
      assert.ok(res.statusCode >= 400 && res.statusCode < 500, `${url}: ${res.statusCode}`);
      assert.ok(res.json().error.code, url);
      assert.equal(res.json().error.requestId, res.headers['x-request-id'], url);
    }
  });

  it('never turns a prototype name into a file lookup', async () => {
    for (const file of ['constructor', '__proto__', 'toString']) {
      assert.equal((await call({ method: 'GET', url: `/docs/assets/${file}` })).statusCode, 404, file);
    }
  });

  it('reads the Bearer scheme case-insensitively', async () => {
    const res = await call({ method: 'GET', url: '/api/v1/auth/whoami', headers: { authorization: `bearer ${tenant.key}` } });
    assert.equal(res.statusCode, 200);
  });

  it('masks the detail of an unexpected failure', async () => {
    const res = await call(withKey(tenant.key, { method: 'GET', url: '/api/v1/proof/boom' }), app);
    assert.equal(res.statusCode, 500);
    assert.equal(res.json().error.message, 'internal error');
    assert.ok(!res.body.includes('hunter2'));
    assert.ok(res.json().error.requestId);
  });
});

/** The module each import or re-export of a file names, and whether it brings in types only. */
function importsIn(file: string, text: string): Array<{ from: string; typeOnly: boolean }> {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true);
  const found: Array<{ from: string; typeOnly: boolean }> = [];
  for (const statement of source.statements) {
    if (!ts.isImportDeclaration(statement) && !ts.isExportDeclaration(statement)) continue;
    if (!statement.moduleSpecifier || !ts.isStringLiteral(statement.moduleSpecifier)) continue;
    const clause = ts.isImportDeclaration(statement) ? statement.importClause : undefined;
    const typeOnly = ts.isImportDeclaration(statement)
      ? Boolean(clause?.isTypeOnly || (clause && !clause.name && clause.namedBindings && ts.isNamedImports(clause.namedBindings)
        && clause.namedBindings.elements.every((e) => e.isTypeOnly)))
      : statement.isTypeOnly;
    found.push({ from: statement.moduleSpecifier.text, typeOnly });
  }
  return found;
}

describe('pure rules (db/rules/)', () => {
  const dir = path.join(__dirname, '..', '..', 'db', 'rules');
  // A rule may compute (node:crypto, the pure RFC 8785 `canonicalize`, the node:crypto-only timestamped
  // HMAC in runtime/), build a ServiceError, and use other rules; anything else it needs (entities) comes
  // in as types only, so no rule reaches TypeORM, a database or the network.
  const allowed = new Set(['node:crypto', 'canonicalize', '../../runtime/service-error', '../../runtime/timestamped-hmac']);
  const files = fs.readdirSync(dir).filter((f) => f.endsWith('.ts'));

  it('are present', () => assert.ok(files.length >= 8, files.join(', ')));

  for (const file of files) {
    it(`${file} imports only types, node:crypto, canonicalize, ServiceError and other rules, and calls no network`, () => {
      const text = fs.readFileSync(path.join(dir, file), 'utf8');
      const valueImports = importsIn(file, text)
        .filter(({ from, typeOnly }) => !typeOnly && !allowed.has(from) && !/^\.\/[a-z-]+$/.test(from)).map(({ from }) => from);
      assert.deepEqual(valueImports, [], `${file} imports at run time`);
      assert.doesNotMatch(text, /\b(require|import)\s*\(|\bfetch\s*\(/, `${file} loads modules or calls the network`);
    });
  }
});

describe('layering', () => {
  const root = path.join(__dirname, '..', '..');
  const layers = ['db', 'api', 'runtime'];

  function sources(dir: string): string[] {
    return fs.readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((e) => {
      const rel = path.posix.join(dir, e.name);
      if (e.isDirectory()) return sources(rel);
      return e.name.endsWith('.ts') ? [rel] : [];
    });
  }

  // Every relative import, type-only included: a type cycle still couples the files it runs through.
  function importsOf(file: string): string[] {
    return importsIn(file, fs.readFileSync(path.join(root, file), 'utf8')).flatMap(({ from }) => {
      if (!from.startsWith('.')) return [];
      const base = path.posix.normalize(path.posix.join(path.posix.dirname(file), from));
      return [`${base}.ts`, `${base}/index.ts`].filter((f) => fs.existsSync(path.join(root, f))).slice(0, 1);
    });
  }

  const files = layers.flatMap(sources);
  const graph = new Map(files.map((f) => [f, importsOf(f)]));

  // Tarjan's strongly connected components; each component of more than one file holds a cycle.
  function cycles(): string[][] {
    const index = new Map<string, number>();
    const low = new Map<string, number>();
    const stack: string[] = [];
    const onStack = new Set<string>();
    const found: string[][] = [];
    const visit = (v: string) => {
      index.set(v, index.size);
      low.set(v, index.get(v)!);
      stack.push(v);
      onStack.add(v);
      for (const w of graph.get(v) ?? []) {
        if (!index.has(w)) {
          visit(w);
          low.set(v, Math.min(low.get(v)!, low.get(w)!));
        } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
      if (low.get(v) !== index.get(v)) return;
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(component);
    };
    for (const f of files) if (!index.has(f)) visit(f);
    return found;
  }

  // One concrete path around a component, so the failure names the files to untangle.
  function cycleThrough(component: string[]): string {
    const members = new Set(component);
    const start = [...component].sort()[0];
    const previous = new Map<string, string>();
    const queue = [start];
    while (queue.length) {
      const v = queue.shift()!;
      for (const w of graph.get(v) ?? []) {
        if (!members.has(w)) continue;
        if (w === start) {
          const trail = [v];
          while (trail[0] !== start) trail.unshift(previous.get(trail[0])!);
          return [...trail, start].join(' -> ');
        }
        if (!previous.has(w)) {
          previous.set(w, v);
          queue.push(w);
        }
      }
    }
    return component.join(', ');
  }

  it(`no import cycles under ${layers.join('/, ')}/ (type-only imports included)`, () => {
    assert.ok(files.length > 100, `${files.length} files read`);
    assert.deepEqual(cycles().map((c) => `${c.length} files: ${cycleThrough(c)}`), []);
  });

  it('runtime/ imports nothing from db/ or api/', () => {
    const upward = files.filter((f) => f.startsWith('runtime/'))
      .flatMap((f) => graph.get(f)!.filter((t) => !t.startsWith('runtime/')).map((t) => `${f} -> ${t}`));
    assert.deepEqual(upward, []);
  });

  it('plugins import no domain route module', () => {
    const domains = new Set(fs.readdirSync(path.join(root, 'api'), { withFileTypes: true })
      .filter((e) => e.isDirectory() && e.name !== 'plugins').map((e) => `api/${e.name}/`));
    const reaching = files.filter((f) => f.startsWith('api/plugins/'))
      .flatMap((f) => graph.get(f)!.filter((t) => [...domains].some((d) => t.startsWith(d))).map((t) => `${f} -> ${t}`));
    assert.deepEqual(reaching, []);
  });
});
