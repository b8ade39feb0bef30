import assert from 'node:assert/strict';
import { isCalendarDateTime } from '../../db/rules/date-time';

describe('rules: ISO 8601 date-times', () => {
  it('accepts real instants with a zone, seconds and fraction optional', () => {
    for (const ok of ['2026-11-23T10:00Z', '2028-02-29T23:59:59.123456789+02:00', '2026-12-31T00:00:00-05:30']) {
      assert.equal(isCalendarDateTime(ok), true, ok);
    }
  });

  it('refuses days and times that do not exist, which Date.parse would roll over', () => {
    for (const bad of ['2026-02-29T10:00Z', '2026-02-30T10:00:00Z', '2026-11-31T10:00Z', '2026-13-01T10:00Z', '2026-00-10T10:00Z',
      '2026-11-23T24:00Z', '2026-11-23T10:60Z', '2026-11-23T10:00:60Z']) {
      assert.equal(isCalendarDateTime(bad), false, bad);
    }
    assert.equal(new Date('2026-02-30T10:00:00Z').toISOString(), '2026-03-02T10:00:00.000Z', 'what the rule guards against');
  });

  it('refuses a date-time without a zone or in another shape', () => {
    for (const bad of ['2026-11-23T10:00', '2026-11-23', 'next week', '2026-11-23 10:00Z']) assert.equal(isCalendarDateTime(bad), false, bad);
  });
});
