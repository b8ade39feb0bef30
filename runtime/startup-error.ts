/**
 * A start-up failure the person starting the service can fix. Its message is one line that names the
 * cause and what to do; `npm start`, `npm run api|worker` and `sv` print it without a stack trace.
 */
export class StartupError extends Error {}

/** The one line to print for any error that stopped a start: ours as they are, others' first line. */
export function startupFailureLine(err: unknown): string {
  if (err instanceof StartupError) return err.message;
  const message = (err instanceof Error ? err.message : String(err ?? '')).split('\n')[0].trim();
  return `failed to start: ${message || 'unknown error'}`;
}
