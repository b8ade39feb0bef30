export interface GroupOptions {
  /** Groups running at once; a call that finds fewer running starts its own group at once. */
  concurrency: number;
  /** The most calls in one group. */
  maxGroup: number;
}

/**
 * Calls that run together: `runMany` takes a group of inputs and answers their outputs in the same order (one
 * statement and one commit for the group). A call never waits for company: while fewer than `concurrency` groups
 * run, it starts a group at once, alone if it is alone; calls arriving while every slot is busy wait together
 * and go as the next group the moment a slot frees. So a lone caller sees no added delay, and under load the
 * statements a call costs fall with the load. A group that fails (or answers a count of outputs other than its
 * inputs') is run again a call at a time, in its slot, so one call's error (or a deadlock between groups) is
 * answered to that call alone.
 */
export function groupedCalls<I, O>(runMany: (inputs: I[]) => Promise<O[]>, options: GroupOptions): (input: I) => Promise<O> {
  const waiting: Array<{ input: I; resolve: (output: O) => void; reject: (err: unknown) => void }> = [];
  let running = 0;

  const runGroup = async (group: typeof waiting) => {
    try {
      const outputs = await runMany(group.map((call) => call.input));
      if (outputs.length !== group.length) throw new Error(`a group of ${group.length} answered ${outputs.length} outputs`);
      group.forEach((call, i) => call.resolve(outputs[i]));
    } catch (err) {
      if (group.length === 1) return group[0].reject(err);
      for (const call of group) {
        await Promise.resolve().then(() => runMany([call.input])).then(([output]) => call.resolve(output), call.reject);
      }
    }
  };
  const startNext = () => {
    while (running < options.concurrency && waiting.length > 0) {
      running++;
      void runGroup(waiting.splice(0, options.maxGroup)).finally(() => {
        running--;
        startNext();
      });
    }
  };
  return (input) => new Promise<O>((resolve, reject) => {
    waiting.push({ input, resolve, reject });
    startNext();
  });
}
