import assert from 'node:assert/strict';
import { Block, UnitLeases, blockOf } from '../../db/platform/unit-leases';

/** A shared counter as the database keeps it: takes never pass the limit they are taken under. */
function counter(limit: number, endsAt: number, fullUntil: (end: number) => number = (end) => end) {
  const state = { count: 0, takes: 0 };
  const take = async (_subject: string, lim: number): Promise<Block> => {
    state.takes += 1;
    await new Promise((resolve) => setImmediate(resolve));
    const cap = Math.min(limit, lim);
    const granted = Math.min(blockOf(lim), Math.max(0, cap - state.count));
    state.count += granted;
    return { granted, count: state.count, endsAt, full: state.count >= cap, fullUntil: fullUntil(endsAt) };
  };
  return { state, take };
}

describe('unit leases (one process\'s blocks of a shared counter)', () => {
  it('takes a 64th of the limit at once and spends it without asking again', async () => {
    const c = counter(640, Date.now() + 60_000);
    const leases = new UnitLeases(c.take);
    for (let i = 0; i < 4; i++) assert.equal((await leases.use('k', 640)).limited, false);
    assert.equal(c.state.takes, 1);
    assert.equal(c.state.count, 10);
  });

  it('takes the next block in the background half-way through the last, so that no use waits', async () => {
    const c = counter(640, Date.now() + 60_000);
    const leases = new UnitLeases(c.take);
    for (let i = 0; i < 6; i++) await leases.use('k', 640);
    await new Promise((resolve) => setTimeout(resolve, 10));
    assert.equal(c.state.takes, 2);
    assert.equal(c.state.count, 20);
    for (let i = 0; i < 9; i++) await leases.use('k', 640);
    assert.equal(c.state.takes, 3, 'no use waited for a take: the third was again half-way');
  });

  it('takes blocks of one unit only when needed, so small limits stay exact across processes', async () => {
    const c = counter(39, Date.now() + 60_000);
    const leases = new UnitLeases(c.take);
    await leases.use('k', 39);
    await new Promise((resolve) => setTimeout(resolve, 10));
    assert.equal(c.state.count, 1);
  });

  it('concurrent uses share one take at a time, never pass the limit and are not refused early', async () => {
    const c = counter(25, Date.now() + 60_000);
    const leases = new UnitLeases(c.take);
    const uses = await Promise.all(Array.from({ length: 40 }, () => leases.use('k', 640)));
    assert.equal(uses.filter((u) => !u.limited).length, 25);
    assert.equal(c.state.count, 25);
    assert.ok(c.state.takes <= 4, `${c.state.takes} takes for 25 units in blocks of 10`);
  });

  it('knows a full counter full until fullUntil, then asks again', async () => {
    let now = 1_000;
    const c = counter(1, 100_000, () => 2_000);
    const leases = new UnitLeases(c.take, () => now);
    assert.equal((await leases.use('k', 1)).limited, false);
    assert.equal((await leases.use('k', 1)).limited, true);
    const takes = c.state.takes;
    assert.equal((await leases.use('k', 1)).limited, true);
    assert.equal(c.state.takes, takes, 'no statement while the answer holds');
    now = 2_001;
    assert.equal((await leases.use('k', 1)).limited, true);
    assert.equal(c.state.takes, takes + 1);
  });

  it('uses a block just taken although the local clock has passed its end', async () => {
    const leases = new UnitLeases(counter(64, 500).take, () => 1_000);
    assert.equal((await leases.use('k', 64)).limited, false);
  });

  it('gives a unit back only to the lease it came from', async () => {
    let end = 10_000;
    const take = async (): Promise<Block> => ({ granted: 1, count: 1, endsAt: end, full: false, fullUntil: end });
    let takes = 0;
    const leases = new UnitLeases(async () => { takes += 1; return take(); }, () => 0);
    const first = await leases.use('k', 64);
    leases.giveBack('k', 64, first.endsAt);
    await leases.use('k', 64);
    assert.equal(takes, 1, 'the unit given back was spent again');
    end = 20_000;
    const next = await leases.use('k', 64);
    leases.giveBack('k', 64, first.endsAt);
    assert.equal(next.endsAt, 20_000);
    await leases.use('k', 64);
    assert.equal(takes, 3, 'a unit of an ended lease does not join the next');
  });

  it('keeps a lease per limit when one count is used under two (a link\'s part uploads and its other calls)', async () => {
    const c = counter(600, Date.now() + 60_000);
    const leases = new UnitLeases(c.take);
    for (let i = 0; i < 130; i++) assert.equal((await leases.use('link', 600)).limited, false);
    const small = await leases.use('link', 120);
    assert.equal(small.limited, true, 'past 120 in all: a call under the smaller limit is refused, not paid from the parts\' lease');
    assert.equal((await leases.use('link', 600)).limited, false, 'and the parts go on');
  });
});
