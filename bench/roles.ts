import { ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { Cleanup } from '../test/support/servers';
import { cpuSeconds } from './service';

const ROOT = path.resolve(__dirname, '..');

interface RoleProcess {
  pid: number;
  /** Seconds of CPU the process used so far (user + system), from /proc; 0 once it is gone. */
  cpuSeconds: () => number;
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
  return { pid, cpuSeconds: () => cpuSeconds(pid), output: () => out };
}
