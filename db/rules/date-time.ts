/** An ISO 8601 date-time with a time zone, seconds and fraction optional. */
export const ISO_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2})$/;

/**
 * Whether an ISO_DATE_TIME string names a day and time that exist. `Date.parse` rolls 2026-02-30 over
 * to March, and PostgreSQL refuses it, so a value accepted on that word would fail only once stored.
 */
export function isCalendarDateTime(value: string): boolean {
  const m = ISO_DATE_TIME.exec(value);
  if (!m) return false;
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4], m[5], m[6] ?? '0'].map(Number);
  const utc = new Date(Date.UTC(year, month - 1, day));
  return utc.getUTCFullYear() === year && utc.getUTCMonth() === month - 1 && utc.getUTCDate() === day
    && hour <= 23 && minute <= 59 && second <= 59;
}

/** Seconds from `now` to the next UTC midnight, when a daily ceiling or quota opens again (at least 1). */
export function secondsToNextUtcDay(now: Date = new Date()): number {
  const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
  return Math.max(1, Math.ceil((next - now.getTime()) / 1000));
}
