import cluster from 'node:cluster';
import { ChildProcess, fork } from 'node:child_process';
import { AggregatorRegistry, Registry } from 'prom-client';

/** Set in the roles' environment: they leave Ctrl-C to the supervisor and stop on its SIGTERM only. */
export const SUPERVISED_ENV = 'SV_SUPERVISED';
const READY_MESSAGE = 'sv:ready';
/** An API process asks the supervisor for the summed metrics; the supervisor collects each ready API process's part. */
const METRICS_REQUEST = 'sv:metrics-request';
const METRICS_ANSWER = 'sv:metrics-answer';
const METRICS_COLLECT = 'sv:metrics-collect';
const METRICS_PART = 'sv:metrics-part';
/** How long the supervisor waits for every API process's part; the asking process waits a little longer. */
const METRICS_COLLECT_MS = 5_000;

type MetricsPart = Awaited<ReturnType<Registry['getMetricsAsJSON']>>;
interface MetricsMessage {
  type?: string;
  id?: number;
  text?: string;
  metrics?: MetricsPart;
  error?: string;
}

export const isSupervised = () => process.env[SUPERVISED_ENV] === '1';

/** A role tells the supervisor it has started (the API listens, the worker polls); outside `npm start` it does nothing. */
export function announceReady(): void {
  if (isSupervised() && process.send) process.send(READY_MESSAGE);
}

/**
 * In an API process under `npm start`: `registry` is this process's part of the sum, and the answer is
 * how `/metrics` reads the sum over every API process (they share the port, so a scrape reaches
 * whichever took the connection). Outside `npm start`, null: each process reports its own.
 */
export function supervisedMetrics(registry: Registry): (() => Promise<string>) | null {
  if (!isSupervised() || !cluster.isWorker || !process.send) return null;
  const send = (message: MetricsMessage) => process.send!(message);
  let next = 0;
  const waiting = new Map<number, (answer: MetricsMessage) => void>();
  process.on('message', (message: MetricsMessage) => {
    if (message?.type === METRICS_COLLECT) {
      void registry.getMetricsAsJSON().then(
        (metrics) => send({ type: METRICS_PART, id: message.id, metrics }),
        (err: Error) => send({ type: METRICS_PART, id: message.id, error: err.message }));
    } else if (message?.type === METRICS_ANSWER) {
      waiting.get(message.id!)?.(message);
    }
  });
  return () => new Promise<string>((resolve, reject) => {
    const id = next++;
    const timer = setTimeout(() => {
      waiting.delete(id);
      reject(new Error('the supervisor did not answer'));
    }, METRICS_COLLECT_MS + 2_000);
    waiting.set(id, (answer) => {
      clearTimeout(timer);
      waiting.delete(id);
      if (answer.text === undefined) reject(new Error(answer.error ?? 'no metrics'));
      else resolve(answer.text);
    });
    send({ type: METRICS_REQUEST, id });
  });
}

/**
 * The supervisor's side: every ready API process's registry as JSON, summed by prom-client's
 * `AggregatorRegistry.aggregate` (counters and histograms add up, per label set).
 */
function collectMetrics(apis: ChildProcess[], id: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: MetricsPart[] = [];
    let pending = apis.length;
    const done = (err: Error | null) => {
      clearTimeout(timer);
      for (const api of apis) api.off('message', onPart);
      if (err) reject(err);
      else AggregatorRegistry.aggregate(parts).metrics().then(resolve, reject);
    };
    const onPart = (message: MetricsMessage) => {
      if (message?.type !== METRICS_PART || message.id !== id) return;
      if (!message.metrics) return done(new Error(message.error ?? 'an API process sent no metrics'));
      parts.push(message.metrics);
      if (--pending === 0) done(null);
    };
    const timer = setTimeout(() => done(new Error(`${pending} of ${apis.length} API processes did not answer within ${METRICS_COLLECT_MS} ms`)), METRICS_COLLECT_MS);
    for (const api of apis) {
      api.on('message', onPart);
      api.send({ type: METRICS_COLLECT, id });
    }
    if (apis.length === 0) done(null);
  });
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
  /** Announced ready since its last start: an API process that can give its part of the metrics. */
  ready: boolean;
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
      name: `api ${i}`, restarts: 0, startedAt: 0, child: null, ready: false,
      start: () => cluster.fork(env).process,
    });
  }
  slots.push({
    name: 'worker', restarts: 0, startedAt: 0, child: null, ready: false,
    start: () => fork(options.workerScript, [], { env, execArgv: process.execArgv }),
  });

  let collections = 0;
  const readyApis = () => slots.flatMap((s) => (s.name !== 'worker' && s.ready && s.child?.connected ? [s.child] : []));
  const launch = (slot: Slot) => {
    slot.startedAt = Date.now();
    slot.ready = false;
    const child = slot.start();
    slot.child = child;
    child.on('message', (message: MetricsMessage | string) => {
      if (message === READY_MESSAGE) slot.ready = true;
      else if (typeof message === 'object' && message?.type === METRICS_REQUEST) {
        void collectMetrics(readyApis(), collections++).then((text) => ({ text }), (err: Error) => ({ error: err.message })).then((answer) => {
          if (child.connected) child.send({ type: METRICS_ANSWER, id: message.id, ...answer });
        });
      }
    });
    child.once('exit', (code, signal) => {
      slot.child = null;
      slot.ready = false;
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
