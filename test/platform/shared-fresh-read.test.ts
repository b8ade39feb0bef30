import assert from 'node:assert/strict';
import { sharedFreshRead } from '../../runtime/shared-fresh-read';

/** A read whose answers the test releases by hand, recording when each read began. */
function manualReads() {
  const started: Array<{ key: string; release: (value: number) => void; fail: (err: Error) => void }> = [];
  const read = (key: string) => new Promise<number>((resolve, reject) => started.push({ key, release: resolve, fail: reject }));
  return { started, read };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('sharedFreshRead: concurrent reads shared, never one that began before the caller asked', () => {
  it('a caller during a running read waits for the next one, which every such caller shares', async () => {
    const { started, read } = manualReads();
    const shared = sharedFreshRead(read);
    const first = shared('a');
    assert.equal(started.length, 1);
    const second = shared('a');
    const third = shared('a');
    assert.equal(started.length, 1, 'no second read while the first runs');
    started[0].release(1);
    assert.equal(await first, 1);
    await settle();
    assert.equal(started.length, 2, 'the queued callers start one read when the first ends');
    started[1].release(2);
    assert.equal(await second, 2, 'a caller that came during read 1 is answered by read 2, not by read 1');
    assert.equal(await third, 2);
    const fourth = shared('a');
    assert.equal(started.length, 3, 'with nothing running, a caller starts a read at once');
    started[2].release(3);
    assert.equal(await fourth, 3);
  });

  it('keys are apart, and a failed read fails only its own callers', async () => {
    const { started, read } = manualReads();
    const shared = sharedFreshRead(read);
    const a = shared('a');
    const b = shared('b');
    assert.deepEqual(started.map((s) => s.key), ['a', 'b']);
    const aAgain = shared('a');
    started[0].fail(new Error('gone'));
    await assert.rejects(a, /gone/);
    await settle();
    started[2].release(7);
    assert.equal(await aAgain, 7, 'the queued read runs after a failure');
    started[1].release(5);
    assert.equal(await b, 5);
  });
});
