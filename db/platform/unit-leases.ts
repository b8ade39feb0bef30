/** A block of units one take got from a shared counter. */
export interface Block {
  granted: number;
  /** The counter's total after this take, every process's units included. */
  count: number;
  /** When the counter's units lapse (its window's or period's end), epoch milliseconds. */
  endsAt: number;
  /** Nothing was left; `fullUntil` (epoch ms) says how long that answer holds before it is asked again (in the background). */
  full: boolean;
  fullUntil: number;
}

/** What one use of a lease says. */
export interface LeaseUse {
  /** Nothing was left: this use took no unit. */
  limited: boolean;
  /** The counter's units taken by every process and not left in this one: those used, as far as it knows. */
  used: number;
  endsAt: number;
}

interface Lease extends Block {
  left: number;
}

/** Units taken at once: one in 64 of the limit, so a busy subject costs one statement per block. */
export const LEASE_SHARE = 64;

export const blockOf = (limit: number) => Math.max(1, Math.ceil(limit / LEASE_SHARE));

const leaseKey = (subject: string, limit: number) => `${limit} ${subject}`;

/**
 * One process's units of shared counters (rows in PostgreSQL that every process counts into), taken in
 * blocks and spent locally, so that a busy subject costs a statement per block instead of per request.
 * The counter never passes its limit: a take is granted only what is left (no overshoot). A subject
 * may be refused early by at most the units other processes took and have not spent: at most one
 * and a half blocks each (a block, and half of the one before it). One take per subject runs at a
 * time; the uses that wait for it share it. `take(subject, limit)` asks the database for a block.
 */
export class UnitLeases {
  private readonly leases = new Map<string, Lease>();
  private readonly takes = new Map<string, Promise<void>>();

  constructor(private readonly take: (subject: string, limit: number) => Promise<Block>, private readonly now: () => number = Date.now) {}

  /**
   * A unit of `subject`'s count under `limit`. A subject counted under two limits (a link's part uploads
   * and its other calls share one window) has a lease for each: units taken under the larger limit are
   * never spent against the smaller, and the smaller one's full count refuses only its own uses.
   */
  async use(subject: string, limit: number): Promise<LeaseUse> {
    const key = leaseKey(subject, limit);
    // After a take, its answer stands even if this process's clock has passed the database's end.
    for (let asked = false; ; asked = true) {
      const lease = this.leases.get(key);
      if (lease && (asked || lease.endsAt > this.now())) {
        if (lease.left > 0) {
          lease.left -= 1;
          this.prefetch(key, subject, limit, lease);
          return { limited: false, used: lease.count - lease.left, endsAt: lease.endsAt };
        }
        if (lease.full) {
          // Past fullUntil the counter is asked again in the background; until it answers, full it is.
          if (!asked && lease.fullUntil <= this.now() && !this.takes.has(key)) this.refill(key, subject, limit).catch(() => undefined);
          return { limited: true, used: lease.count, endsAt: lease.endsAt };
        }
      }
      await (this.takes.get(key) ?? this.refill(key, subject, limit));
    }
  }

  /**
   * Half a block before a lease runs out, the next block is taken in the background, so that a busy
   * subject's requests do not all wait for a take. Blocks of one unit (limits below 64) are taken when
   * needed only, which keeps them exact across processes.
   */
  private prefetch(key: string, subject: string, limit: number, lease: Lease): void {
    if (lease.full || lease.granted < 2 || lease.left * 2 > lease.granted || this.takes.has(key)) return;
    // A failed take in the background costs nothing: the next use that finds no unit takes again itself.
    this.refill(key, subject, limit).catch(() => undefined);
  }

  /** A unit that `use` gave and nothing spent goes back to the lease it came from (and to no later one). */
  giveBack(subject: string, limit: number, endsAt: number): void {
    const lease = this.leases.get(leaseKey(subject, limit));
    if (lease && lease.endsAt === endsAt) lease.left += 1;
  }

  private refill(key: string, subject: string, limit: number): Promise<void> {
    const running = this.take(subject, limit).then((block) => {
      const lease = this.leases.get(key);
      if (lease && lease.endsAt === block.endsAt) {
        Object.assign(lease, { ...block, left: lease.left + block.granted });
        return;
      }
      if (this.leases.size >= 10_000) {
        for (const [k, l] of this.leases) if (l.endsAt <= this.now()) this.leases.delete(k);
      }
      this.leases.set(key, { ...block, left: block.granted });
    }).finally(() => this.takes.delete(key));
    this.takes.set(key, running);
    return running;
  }
}
