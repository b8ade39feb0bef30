import { isSupervised } from './role-supervisor';

/**
 * Runs the registered steps in reverse order on SIGINT or SIGTERM (or when the returned function is
 * called after a failed start, with no reason when the caller has said why), once, then exits. A
 * second signal exits at once.
 */
export function onShutdown(
  steps: Array<() => Promise<unknown>>, log: (line: string) => void = () => undefined,
): (reason: string | null, exitCode?: number) => Promise<void> {
  let stopping = false;
  const stop = async (reason: string | null, exitCode = 0) => {
    if (stopping) process.exit(130);
    stopping = true;
    if (reason !== null) log(`${reason}, stopping`);
    for (const step of [...steps].reverse()) {
      try {
        await step();
      } catch (err) {
        log(`while stopping: ${(err as Error).message}`);
      }
    }
    process.exit(exitCode);
  };
  // Under `npm start` the terminal's Ctrl-C reaches every process of the group: the supervisor alone answers it
  // and stops the roles in order with one SIGTERM each (a second signal would make a role exit at once).
  if (isSupervised()) process.on('SIGINT', () => undefined);
  else process.on('SIGINT', () => void stop('SIGINT received'));
  process.on('SIGTERM', () => void stop('SIGTERM received'));
  return stop;
}
