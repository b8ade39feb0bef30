import { ChildProcess, spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { Cleanup } from './servers';

export const ROOT = path.resolve(__dirname, '..', '..');
/** Roles run as `npm run api` / `npm run worker` do: Node with tsx loaded (the production image runs dist/ instead). */
export const TSX_NODE = [process.execPath, '--import', 'tsx'];

export interface RoleProcess {
  child: ChildProcess;
  output: () => string;
  /** SIGTERM (or `signal`) and the exit code once it ended; SIGKILL after `graceMs`. */
  stop: (signal?: NodeJS.Signals, graceMs?: number) => Promise<number | null>;
  exitCode: () => number | null;
}

/**
 * One role of the service as a process of its own, with only PATH, HOME and `env` (never this
 * process's variables), resolved once its output matches `ready`; stopped on cleanup.
 */
export async function startRoleProcess(
  cleanup: Cleanup, command: string[], env: Record<string, string>, ready: RegExp, timeoutMs = 90_000,
): Promise<RoleProcess> {
  const child = spawn(command[0], command.slice(1), {
    cwd: ROOT, env: { PATH: process.env.PATH ?? '', HOME: os.homedir(), ...env }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let code: number | null = null;
  const exited = new Promise<number | null>((resolve) => child.once('exit', (c, signal) => {
    code = c ?? (signal ? -1 : null);
    resolve(code);
  }));
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const stop = async (signal: NodeJS.Signals = 'SIGTERM', graceMs = 20_000) => {
    if (child.exitCode !== null || child.signalCode !== null) return code;
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    const result = await exited;
    clearTimeout(timer);
    return result;
  };
  cleanup.push(() => stop());
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not ready within ${timeoutMs} ms:\n${out}`)), timeoutMs);
    const check = () => {
      if (ready.test(out)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', check);
    child.stderr!.on('data', check);
    void exited.then((c) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${c} before it was ready:\n${out}`));
    });
  });
  return { child, output: () => out, stop, exitCode: () => code };
}

/**
 * Runs a command to its end with only PATH, HOME and `env` (or, with `inherit`, this process's variables and `env`),
 * from the checkout (or `cwd`); its exit code and output.
 */
export function runCommand(
  command: string[], env: Record<string, string>, options: { cwd?: string; inherit?: boolean } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command[0], command.slice(1), {
      cwd: options.cwd ?? ROOT,
      env: options.inherit ? { ...process.env, ...env } : { PATH: process.env.PATH ?? '', HOME: os.homedir(), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

/** `sv <args> --json` at `svJs` (the checkout's bin/sv.js or a build's) with `env`: its parsed answer; a failure fails the test. */
export function svJson(svJs: string, env: Record<string, string>) {
  return async (...args: string[]) => {
    const res = await runCommand([process.execPath, svJs, ...args, '--json'], env);
    if (res.code !== 0) throw new Error(`sv ${args.join(' ')} exited with ${res.code}: ${res.stderr}`);
    return JSON.parse(res.stdout);
  };
}
