/** A workflow that does nothing: bench:webhooks measures how many of these the dev server completes per second. */
export async function emptyWorkflow(): Promise<void> {
  return undefined;
}
