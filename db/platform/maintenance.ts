import { DataSource } from 'typeorm';

export interface PurgeCounts {
  idempotencyRecords: number;
  identityNonces: number;
  rateLimitWindows: number;
  teammateSessions: number;
  outboxEvents: number;
  engagementBeacons: number;
  inboxStreamLeases: number;
  nojsSubmissionKeys: number;
  signInLinks: number;
}

async function purge(ds: DataSource, sql: string): Promise<number> {
  const [, count] = (await ds.query(sql)) as [unknown, number];
  return count;
}

/** Deletes records whose purpose has passed; each statement is idempotent. */
export async function purgeExpiredRecords(ds: DataSource): Promise<PurgeCounts> {
  return {
    idempotencyRecords: await purge(ds, `DELETE FROM idempotency_records WHERE expires_at <= now()`),
    identityNonces: await purge(ds, `DELETE FROM identity_nonces WHERE expires_at <= now()`),
    rateLimitWindows: await purge(ds, `DELETE FROM rate_limit_windows WHERE window_start < now() - interval '1 hour'`),
    teammateSessions: await purge(ds, `DELETE FROM teammate_sessions WHERE expires_at <= now() - interval '1 day'`),
    // Deliveries keep their own copy of the body, so a published row is only needed for a while.
    outboxEvents: await purge(ds, `DELETE FROM outbox_events WHERE processed_at < now() - interval '7 days'`),
    // A token is good until the end of the next UTC day, so older days can no longer repeat.
    engagementBeacons: await purge(ds, `DELETE FROM proof_engagement_beacons WHERE day < current_date - 2`),
    // Leases of streams whose process died (a live stream refreshes its own).
    inboxStreamLeases: await purge(ds, `DELETE FROM inbox_stream_leases WHERE expires_at <= now()`),
    // A no-JavaScript form's key refuses repeats for 24 hours; an older claim may be taken again anyway.
    nojsSubmissionKeys: await purge(ds, `DELETE FROM collection_nojs_submissions WHERE created_at <= now() - interval '24 hours'`),
    // A console sign-in link works for 15 minutes; a day later its row tells nobody anything.
    signInLinks: await purge(ds, `DELETE FROM teammate_sign_in_links WHERE expires_at <= now() - interval '1 day'`),
  };
}
