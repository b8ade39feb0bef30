import assert from 'node:assert/strict';
import { ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseKeyRing } from '../../runtime/secret-box';
import { createTenant, endUserToken, eventually } from '../support/fixtures';
import { ctx } from '../support/root-hooks';
import { freePort } from '../support/servers';
import { runCommand } from '../support/role-processes';

const ROOT = path.resolve(__dirname, '..', '..');
const TSX = path.join(ROOT, 'node_modules', '.bin', 'tsx');

const SV = [process.execPath, path.join(ROOT, 'bin', 'sv.js')];
const REFUSAL = /SV_SECRET_KEYS must be set when DATABASE_URL is: .*make one with `sv secret-keys generate`/;

describe('secrets on purpose: SV_SECRET_KEYS outside the embedded default', function () {
  this.timeout(120_000);
  let dataDir: string;
  before(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sv-keys-'));
  });
  after(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  const roles: Array<[string, string[]]> = [
    ['npm run api', [TSX, path.join(ROOT, 'api', 'server.ts')]],
    ['npm run worker', [TSX, path.join(ROOT, 'worker', 'main.ts')]],
    ['npm start with DATABASE_URL', [TSX, path.join(ROOT, 'bin', 'start.ts')]],
    ['sv org create', [...SV, 'org', 'create', '--name', 'Acme']],
  ];
  for (const [name, args] of roles) {
    it(`${name} refuses to start without it, in one line naming it and how to make one`, async () => {
      const port = String(await freePort());
      const res = await runCommand(args, { DATABASE_URL: ctx.databaseUrl, TEMPORAL_ADDRESS: '127.0.0.1:1', SV_DATA_DIR: dataDir, PORT: port });
      assert.equal(res.code, 1, `${res.stdout}\n${res.stderr}`);
      const lines = res.stderr.trim().split('\n');
      assert.equal(lines.length, 1, `one line on stderr, got:\n${res.stderr}`);
      assert.match(lines[0], REFUSAL);
      assert.doesNotMatch(res.stderr, /^\s+at /m, 'no stack trace');
      assert.deepEqual(fs.readdirSync(dataDir), [], 'no key file was generated');
    });
  }

  it('sv secret-keys generate prints a new key ring value that the roles accept', async () => {
    const [first, second] = await Promise.all([runCommand([...SV, 'secret-keys', 'generate'], {}), runCommand([...SV, 'secret-keys', 'generate'], {})]);
    assert.equal(first.code, 0, first.stderr);
    const value = first.stdout.trim();
    assert.match(value, /^k\d{8}:[A-Za-z0-9+/]{43}=$/);
    assert.equal(parseKeyRing(value).keys.get(value.split(':')[0])!.length, 32);
    assert.notEqual(second.stdout.trim(), value, 'a new key each time');
    const listed = await runCommand([...SV, 'key', 'list', '--org', 'org_none', '--json'], { DATABASE_URL: ctx.databaseUrl, SV_SECRET_KEYS: value });
    assert.equal(listed.code, 0, listed.stderr);
  });

  it('a malformed SV_SECRET_KEYS is refused in one line too', async () => {
    const res = await runCommand([TSX, path.join(ROOT, 'api', 'server.ts')],
      { DATABASE_URL: ctx.databaseUrl, SV_SECRET_KEYS: 'k1:short', PORT: String(await freePort()) });
    assert.equal(res.code, 1);
    assert.match(res.stderr.trim(), /^\[sv\] API: SV_SECRET_KEYS must be kid:base64 entries of 32-byte keys$/);
  });
});

describe('a sealed secret that cannot be opened answers 503 and is logged with its key id', function () {
  this.timeout(120_000);
  let api: ChildProcess | undefined;
  afterEach(() => api?.kill('SIGTERM'));

  for (const [name, kid] of [['another key under the same id', 'test'], ['a key id the ring does not hold', 'other']] as const) {
    it(`${name}: an end-user token answers 503 SERVICE_UNAVAILABLE in the envelope, never 500`, async () => {
      const tenant = await createTenant();
      const port = await freePort();
      let output = '';
      api = spawn(TSX, [path.join(ROOT, 'api', 'server.ts')], {
        cwd: ROOT,
        env: {
          PATH: process.env.PATH ?? '', HOME: os.homedir(), DATABASE_URL: ctx.databaseUrl, TEMPORAL_ADDRESS: '127.0.0.1:1',
          PORT: String(port), LOG_LEVEL: 'error', SV_SECRET_KEYS: `${kid}:${randomBytes(32).toString('base64')}`,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      api.stdout!.on('data', (d: Buffer) => (output += d.toString()));
      api.stderr!.on('data', (d: Buffer) => (output += d.toString()));
      const url = `http://127.0.0.1:${port}`;
      await eventually(async () => (await fetch(`${url}/openapi.json`).catch(() => null))?.ok, 60_000);

      const res = await fetch(`${url}/api/v1/installation`, { headers: { authorization: `Bearer ${endUserToken(tenant.product)}` } });
      const body = await res.json() as { error: { code: string; message: string; requestId: string } };
      assert.equal(res.status, 503, JSON.stringify(body));
      assert.equal(body.error.code, 'SERVICE_UNAVAILABLE');
      assert.match(body.error.message, /SV_SECRET_KEYS/);
      await eventually(async () => output.includes(body.error.requestId), 10_000);
      const line = output.split('\n').find((l) => l.includes(body.error.requestId) && l.includes('keyId'));
      assert.ok(line, output);
      assert.equal(JSON.parse(line).keyId, 'test', 'the key id the value was sealed under');
    });
  }
});
