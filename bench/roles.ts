import { ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Cleanup } from '../test/support/servers';

const ROOT = path.resolve(__dirname, '..');

export interface RoleProcess {
  pid: number;
  /** Seconds of CPU the process used so far (user + system), from /proc; null where there is none. */
  cpuSeconds: () => number | null;
}

function cpuSecondsOf(pid: number): number | null {
  try {
    // Fields 14 and 15 of /proc/<pid>/stat: user and system time in clock ticks (100 per second on Linux).
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return null;
  }
}

/**
 * Starts one role of the service (`api/server.ts`, `worker/main.ts`) as its own Node process, as
 * `npm run api` / `npm run worker` do, with `env` on top of this process's environment. Resolves once
 * the role prints `ready` on stdout; SIGTERM on cleanup (its own graceful shutdown), SIGKILL after 15 s.
 */
export async function startRole(
  cleanup: Cleanup, name: string, file: string, env: Record<string, string>, ready: RegExp, onMessage?: (message: unknown) => void,
): Promise<RoleProcess & { output: () => string }> {
  // BENCH_ROLE_NODE_ARGS, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`, profiles the roles.
  const nodeArgs = (process.env.BENCH_ROLE_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child: ChildProcess = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', path.join(ROOT, file)], {
    cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe', ...(onMessage ? ['ipc' as const] : [])],
  });
  if (onMessage) child.on('message', onMessage);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  cleanup.push(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
  });
  child.stderr!.on('data', (chunk: Buffer) => process.stderr.write(`[${name}] ${chunk.toString('utf8')}`));
  let out = '';
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      if (ready.test(out)) resolve();
    });
    child.once('exit', (code) => reject(new Error(`${name} exited with ${code} before it was ready`)));
  });
  const pid = child.pid!;
  return { pid, cpuSeconds: () => cpuSecondsOf(pid), output: () => out };
}
