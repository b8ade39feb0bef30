import { FastifyBaseLogger } from 'fastify';
import { DataSource } from 'typeorm';
import type { EndUserRef } from '../../db/customer-loop/inbox';
import {
  STREAM_LEASE_TTL_MS, StreamLease, refreshStreamLeases, releaseStreamLease, takeStreamLease,
} from '../../db/customer-loop/inbox-streams';
import { ServiceError } from '../../runtime/service-error';

/** What a client told to come back waits: the stream's own reconnect delay. */
const PROCESS_FULL_RETRY_SECONDS = 3;

/**
 * The caps on open inbox streams: `perProcess` streams in this API process (past it 503, so a load
 * balancer's retry may land on another process), and `perEndUser` streams of one end user across
 * every process (past it 429), counted by leases in PostgreSQL that this keeper refreshes while open.
 */
export class InboxStreamSlots {
  private held = 0;
  private readonly leases = new Set<string>();
  private readonly releases = new Set<Promise<void>>();
  private readonly refresher: NodeJS.Timeout;

  constructor(
    private readonly ds: DataSource,
    private readonly limits: { perEndUser: number; perProcess: number },
    private readonly log: FastifyBaseLogger,
  ) {
    this.refresher = setInterval(() => {
      refreshStreamLeases(this.ds, [...this.leases]).catch((err) => this.log.warn({ err }, 'inbox stream leases not refreshed'));
    }, STREAM_LEASE_TTL_MS / 3);
    this.refresher.unref();
  }

  /** A slot for one stream of `owner`, or the refusal; the answer frees it (once, whenever the stream ends). */
  async take(owner: EndUserRef): Promise<() => void> {
    if (this.held >= this.limits.perProcess) {
      throw new ServiceError('SERVICE_UNAVAILABLE', `this API process holds its most inbox streams (${this.limits.perProcess}); retry`,
        { reason: 'inbox_streams_per_process', limit: this.limits.perProcess }, { 'retry-after': String(PROCESS_FULL_RETRY_SECONDS) });
    }
    // Counted before the database is asked, so concurrent opens cannot all pass the process cap.
    this.held += 1;
    let lease: StreamLease;
    try {
      lease = await takeStreamLease(this.ds, owner, this.limits.perEndUser);
    } catch (err) {
      this.held -= 1;
      throw err;
    }
    if ('full' in lease) {
      this.held -= 1;
      throw new ServiceError('RATE_LIMITED', `at most ${this.limits.perEndUser} inbox streams per end user at once; close one first`,
        { reason: 'inbox_streams_per_end_user', limit: this.limits.perEndUser }, { 'retry-after': String(lease.retryAfterSeconds) });
    }
    const { id } = lease;
    this.leases.add(id);
    return () => {
      if (!this.leases.delete(id)) return;
      this.held -= 1;
      const release = releaseStreamLease(this.ds, id)
        .catch((err) => this.log.warn({ err }, 'inbox stream lease not released; it lapses by itself'))
        .finally(() => this.releases.delete(release));
      this.releases.add(release);
    };
  }

  /** After the streams ended: their leases are deleted before the process lets go of the database. */
  async close(): Promise<void> {
    clearInterval(this.refresher);
    await Promise.all([...this.releases]);
  }
}
