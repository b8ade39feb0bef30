import { relayFailures, relayRows } from '../runtime/metrics';

export interface RelayOptions {
  name: string;
  /** Claims and handles up to `batchSize` rows; answers how many it handled. */
  tick: (batchSize: number) => Promise<number>;
  batchSize: number;
  /** Pause when a tick found less than a full batch. */
  idleMs: number;
  log?: (line: string) => void;
}

export interface RunningRelay {
  stop: () => Promise<void>;
}

/**
 * A loop in the worker role that moves committed rows to Temporal (outbox events, pending analyses).
 * Ticks claim rows with FOR UPDATE SKIP LOCKED, so any number of workers may run the same relay.
 */
export function startRelay(opts: RelayOptions): RunningRelay {
  let running = true;
  let wake: (() => void) | null = null;
  const pause = (ms: number) => new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    wake = () => {
      clearTimeout(timer);
      resolve();
    };
  });
  const loop = (async () => {
    let failures = 0;
    while (running) {
      try {
        const handled = await opts.tick(opts.batchSize);
        relayRows.inc({ relay: opts.name }, handled);
        failures = 0;
        if (handled < opts.batchSize) await pause(opts.idleMs);
      } catch (err) {
        failures += 1;
        relayFailures.inc({ relay: opts.name });
        opts.log?.(`${opts.name} relay: ${(err as Error).message}`);
        await pause(Math.min(opts.idleMs * 2 ** failures, 30_000));
      }
    }
  })();
  return {
    stop: async () => {
      running = false;
      wake?.();
      await loop;
    },
  };
}
