import { ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { generateKeyRingValue } from '../runtime/secret-box';
import { Cleanup, freePort } from '../test/support/servers';

const ROOT = path.resolve(__dirname, '..');

// `npm start` on an external PostgreSQL needs a key ring, and the benchmark seals webhook secrets with the same one.
process.env.SV_SECRET_KEYS ??= generateKeyRingValue();

/** The pids of every descendant of `pid`, read from /proc. */
function descendantsOf(pid: number): number[] {
  const parents = new Map<number, number>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // The process ended while we looked.
    }
  }
  const found: number[] = [];
  const walk = (parent: number) => {
    for (const [child, ppid] of parents) if (ppid === parent) { found.push(child); walk(child); }
  };
  walk(pid);
  return found;
}

function commandOf(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
  } catch {
    return '';
  }
}

/** Resident memory of `pid` in bytes (VmRSS), 0 once it is gone. */
export function residentBytes(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** CPU seconds (user + system) `pid` used so far, 0 once it is gone. */
export function cpuSeconds(pid: number): number {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

export interface RunningService {
  base: string;
  port: number;
  /** The API processes `npm start` runs now (node:cluster workers sharing `port`). */
  apiPids: () => number[];
  workerPids: () => number[];
}

/**
 * The service as a newcomer runs it: `npm start` (bin/start.ts: migrations, then the API in one process a core
 * sharing PORT and a worker process, supervised), against the given PostgreSQL and Temporal, in a process group
 * of its own; stopped with SIGINT (Ctrl-C) on cleanup. `env` goes on top of this process's environment.
 */
export async function startService(cleanup: Cleanup, env: Record<string, string>): Promise<RunningService> {
  const port = env.PORT ? Number(env.PORT) : await freePort();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sv-bench-'));
  cleanup.push(async () => fs.rmSync(dataDir, { recursive: true, force: true }));
  // BENCH_ROLE_NODE_ARGS (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`) reaches every role: the supervisor hands its execArgv on.
  const nodeArgs = (process.env.BENCH_ROLE_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child: ChildProcess = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', path.join(ROOT, 'bin', 'start.ts')], {
    cwd: ROOT, detached: true, stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env, SV_DATA_DIR: dataDir, HOST: '127.0.0.1', LOG_LEVEL: 'error', TEMPORAL_LOG_LEVEL: 'ERROR',
      // The worker's metrics on a port of its own choosing: benchmarks may run beside a service already started.
      SV_WORKER_METRICS_PORT: '0', ...env, PORT: String(port),
    },
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  cleanup.push(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    process.kill(-child.pid!, 'SIGINT');
    const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 20_000);
    await exited;
    clearTimeout(timer);
  });
  let out = '';
  child.stderr!.on('data', (chunk: Buffer) => process.stderr.write(`[npm start] ${chunk.toString('utf8')}`));
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      if (out.includes('ready; Ctrl-C stops everything')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`npm start exited with ${code} before it was ready:\n${out}`)));
  });
  const roles = (script: string) => () => descendantsOf(child.pid!).filter((pid) => commandOf(pid).includes(script));
  return {
    base: `http://127.0.0.1:${port}`, port,
    apiPids: roles(path.join('api', 'server.ts')), workerPids: roles(path.join('worker', 'main.ts')),
  };
}
