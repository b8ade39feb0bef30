import cluster from 'node:cluster';
import { ChildProcess, fork } from 'node:child_process';

/** Set in the roles' environment: they leave Ctrl-C to the supervisor and stop on its SIGTERM only. */
export const SUPERVISED_ENV = 'SV_SUPERVISED';
const READY_MESSAGE = 'sv:ready';

export const isSupervised = () => process.env[SUPERVISED_ENV] === '1';

/** A role tells the supervisor it has started (the API listens, the worker polls); outside `npm start` it does nothing. */
export function announceReady(): void {
  if (isSupervised() && process.send) process.send(READY_MESSAGE);
}

export interface RoleSupervisorOptions {
  /** The API's entry (`api/server.ts`), run in `apiProcesses` processes that share HOST:PORT (node:cluster). */
  apiScript: string;
  apiProcesses: number;
  /** The worker's entry (`worker/main.ts`), run once. */
  workerScript: string;
  env: NodeJS.ProcessEnv;
  log: (line: string) => void;
  /** How long a stopping role may take before it is killed. */
  stopTimeoutMs?: number;
}

export interface RunningRoles {
  /** Resolves once every process has started (each API listening, the worker polling). */
  ready: Promise<void>;
  stop: () => Promise<void>;
}

interface Slot {
  name: string;
  start: () => ChildProcess;
  child: ChildProcess | null;
  restarts: number;
  startedAt: number;
}

const MAX_BACKOFF_MS = 30_000;
/** A process that ran this long before it died is restarted at once, as if for the first time. */
const HEALTHY_RUN_MS = 60_000;

/**
 * `npm start`'s roles as processes of their own: the API in several processes sharing the port (one core each)
 * and one worker, restarted when one dies (with a backoff that doubles while it keeps dying young), and
 * stopped together. Under tsx the children inherit its loader through execArgv.
 */
export function superviseRoles(options: RoleSupervisorOptions): RunningRoles {
  const { log } = options;
  const env = { ...options.env, [SUPERVISED_ENV]: '1' };
  let stopping = false;
  cluster.setupPrimary({ exec: options.apiScript, execArgv: process.execArgv });

  const readiness: Array<Promise<void>> = [];
  const firstStart = (slot: Slot) =>
    readiness.push(new Promise<void>((resolve, reject) => {
      const child = slot.child!;
      child.on('message', (message) => {
        if (message === READY_MESSAGE) resolve();
      });
      child.once('exit', (code) => reject(new Error(`${slot.name} exited with ${code} while starting`)));
    }));

  const slots: Slot[] = [];
  for (let i = 1; i <= options.apiProcesses; i += 1) {
    slots.push({
      name: `api ${i}`, restarts: 0, startedAt: 0, child: null,
      start: () => cluster.fork(env).process,
    });
  }
  slots.push({
    name: 'worker', restarts: 0, startedAt: 0, child: null,
    start: () => fork(options.workerScript, [], { env, execArgv: process.execArgv }),
  });

  const launch = (slot: Slot) => {
    slot.startedAt = Date.now();
    slot.child = slot.start();
    slot.child.once('exit', (code, signal) => {
      slot.child = null;
      if (stopping) return;
      if (Date.now() - slot.startedAt > HEALTHY_RUN_MS) slot.restarts = 0;
      const delay = Math.min(MAX_BACKOFF_MS, 1_000 * 2 ** slot.restarts);
      slot.restarts += 1;
      log(`${slot.name} ended (${signal ?? `exit ${code}`}); restarting in ${delay / 1000} s`);
      setTimeout(() => {
        if (!stopping) launch(slot);
      }, delay).unref();
    });
  };

  for (const slot of slots) {
    launch(slot);
    firstStart(slot);
  }

  const stopOne = (slot: Slot, timeoutMs: number) => new Promise<void>((resolve) => {
    const child = slot.child;
    if (!child || child.exitCode !== null) return resolve();
    const timer = setTimeout(() => {
      log(`${slot.name} did not stop within ${timeoutMs / 1000} s; killing it`);
      child.kill('SIGKILL');
    }, timeoutMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });

  return {
    ready: Promise.all(readiness).then(() => undefined),
    stop: async () => {
      stopping = true;
      const timeout = options.stopTimeoutMs ?? 30_000;
      // The APIs first (they finish what they hold), then the worker, so nothing they committed waits on a stopped relay.
      await Promise.all(slots.filter((s) => s.name !== 'worker').map((s) => stopOne(s, timeout)));
      await Promise.all(slots.filter((s) => s.name === 'worker').map((s) => stopOne(s, timeout)));
    },
  };
}
