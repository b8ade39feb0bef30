import assert from 'node:assert/strict';
import { groupedCalls } from '../../runtime/grouped-calls';

/** A group runner whose groups the test answers by hand, recording each group's inputs. */
function manualGroups() {
  const groups: Array<{ inputs: number[]; answer: () => void; fail: (err: Error) => void }> = [];
  const runMany = (inputs: number[]) => new Promise<string[]>((resolve, reject) => groups.push({
    inputs, answer: () => resolve(inputs.map((n) => `out-${n}`)), fail: reject,
  }));
  return { groups, runMany };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('groupedCalls: concurrent calls run together, a lone call at once', () => {
  it('a call that finds a free slot runs at once and alone; calls while every slot is busy go together as the next group', async () => {
    const { groups, runMany } = manualGroups();
    const call = groupedCalls(runMany, { concurrency: 2, maxGroup: 3 });
    const first = call(1);
    assert.deepEqual(groups.map((g) => g.inputs), [[1]], 'no waiting for company');
    const second = call(2);
    assert.deepEqual(groups.map((g) => g.inputs), [[1], [2]]);
    const waiting = [3, 4, 5, 6].map((n) => call(n));
    assert.equal(groups.length, 2, 'never more groups at once than the slots');
    groups[0].answer();
    assert.equal(await first, 'out-1');
    await settle();
    assert.deepEqual(groups.map((g) => g.inputs), [[1], [2], [3, 4, 5]], 'the calls that waited go together, at most maxGroup');
    groups[1].answer();
    assert.equal(await second, 'out-2');
    await settle();
    assert.deepEqual(groups[3].inputs, [6]);
    groups[2].answer();
    groups[3].answer();
    assert.deepEqual(await Promise.all(waiting), ['out-3', 'out-4', 'out-5', 'out-6'], 'each call gets its own output');
  });

  it('a failed group is run again a call at a time: a failing call fails alone, the others are answered', async () => {
    const ran: number[][] = [];
    const call = groupedCalls(async (inputs: number[]) => {
      ran.push(inputs);
      if (inputs.includes(13)) throw new Error(`no 13 (group of ${inputs.length})`);
      return inputs.map((n) => n * 2);
    }, { concurrency: 1, maxGroup: 10 });
    const blocker = call(0);
    const results = await Promise.allSettled([1, 13, 3].map((n) => call(n)));
    await blocker;
    assert.deepEqual(ran, [[0], [1, 13, 3], [1], [13], [3]]);
    assert.deepEqual(results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message)), [2, 'no 13 (group of 1)', 6]);
  });

  it('a group answered with fewer outputs than calls is run again a call at a time: no caller gets another\'s answer or none', async () => {
    const ran: number[][] = [];
    const call = groupedCalls(async (inputs: number[]) => {
      ran.push(inputs);
      return inputs.length > 1 ? inputs.slice(1).map((n) => n * 2) : inputs.map((n) => n * 2);
    }, { concurrency: 1, maxGroup: 10 });
    const blocker = call(0);
    const answers = await Promise.all([1, 2, 3].map((n) => call(n)));
    await blocker;
    assert.deepEqual(answers, [2, 4, 6]);
    assert.deepEqual(ran, [[0], [1, 2, 3], [1], [2], [3]]);
  });

  it('a lone call that fails is rejected with its own error, and the slot is free again', async () => {
    let fail = true;
    const call = groupedCalls(async (inputs: number[]) => {
      if (fail) throw new Error('down');
      return inputs;
    }, { concurrency: 1, maxGroup: 10 });
    await assert.rejects(call(1), /down/);
    fail = false;
    assert.equal(await call(2), 2);
  });
});
