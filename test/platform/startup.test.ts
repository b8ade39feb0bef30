import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../support/servers';
import { runCommand } from '../support/role-processes';

const ROOT = path.join(__dirname, '..', '..');
const TSX = path.join(ROOT, 'node_modules', '.bin', 'tsx');

/** `npm start`'s program with these settings; only its own variables, so the caller's never leak in. */
const start = (env: Record<string, string>) => runCommand([TSX, path.join(ROOT, 'bin', 'start.ts')], env);

function assertOneLine(res: { code: number; stderr: string }, pattern: RegExp): void {
  assert.notEqual(res.code, 0, 'a failed start exits non-zero');
  const lines = res.stderr.trim().split('\n');
  assert.equal(lines.length, 1, `one line on stderr, got:\n${res.stderr}`);
  assert.match(lines[0], pattern);
  assert.doesNotMatch(res.stderr, /^\s+at /m, 'no stack trace');
}

describe('npm start: a failed start says why in one line', function () {
  this.timeout(60_000);
  let tmp: string;
  let ports: Record<string, string>;

  before(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sv-start-'));
    ports = {
      PORT: String(await freePort()),
      SV_EMBEDDED_PG_PORT: String(await freePort()),
      TEMPORAL_DEV_PORT: String(await freePort()),
      TEMPORAL_DEV_UI_PORT: String(await freePort()),
      SV_DATA_DIR: path.join(tmp, 'data'),
    };
  });
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  for (const variable of ['PORT', 'SV_EMBEDDED_PG_PORT', 'TEMPORAL_DEV_PORT']) {
    it(`a port in use (${variable}) is named with the variable that moves it`, async () => {
      const busy = net.createServer();
      await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
      const port = (busy.address() as net.AddressInfo).port;
      try {
        const res = await start({ ...ports, [variable]: String(port) });
        assertOneLine(res, new RegExp(`port ${port} is in use \\(${variable}\\): stop what listens there, or set ${variable} to a free port`));
      } finally {
        await new Promise((resolve) => busy.close(resolve));
      }
    });
  }

  it('a data folder it cannot write names the folder and SV_DATA_DIR', async () => {
    const file = path.join(tmp, 'a-file');
    fs.writeFileSync(file, '');
    const res = await start({ ...ports, SV_DATA_DIR: path.join(file, 'data') });
    assertOneLine(res, /cannot write the data folder .*a-file\/data \(ENOTDIR\): set SV_DATA_DIR to a folder you can write/);
  });

  it('a missing Temporal binary names TEMPORAL_CLI and what to do', async () => {
    const res = await start({ ...ports, DATABASE_URL: 'postgres://127.0.0.1:1/none', SV_SECRET_KEYS: process.env.SV_SECRET_KEYS ?? '',
      TEMPORAL_CLI: path.join(tmp, 'no-temporal') });
    assertOneLine(res, /TEMPORAL_CLI=.*no-temporal is not an executable file: point it at the temporal binary/);
  });

  it('a malformed setting names the variable', async () => {
    const res = await start({ ...ports, PORT: 'abc' });
    assertOneLine(res, /PORT must be a whole number/);
  });
});
