import assert from 'node:assert/strict';
import { scoreFeature } from '../../db/rules/feature-score';

const asOf = new Date('2026-04-01T00:00:00Z');
const daysAgo = (days: number) => new Date(asOf.getTime() - days * 86_400_000);

describe('feature score (pure)', () => {
  it('adds votes, weighted signals and distinct end users, and the breakdown lists every term', () => {
    const { score, breakdown } = scoreFeature({
      asOf,
      votes: 2,
      distinctEndUsers: 3,
      signals: [
        { id: 'sig_b', endUserId: 'eu_1', category: 'feature', urgency: 'low', sentiment: null, createdAt: daysAgo(90) },
        { id: 'sig_a', endUserId: 'eu_3', category: 'bug', urgency: 'high', sentiment: 'negative', createdAt: asOf },
      ],
    });
    // 2 votes + 2×1.5×1.5×1.3×1 + 2×1.2×0.7×1×0.5 + 3 distinct end users × 0.5
    assert.equal(score, 10.19);
    assert.deepEqual(breakdown.votes, { count: 2, weight: 1, points: 2 });
    assert.deepEqual(breakdown.distinctEndUsers, { count: 3, weight: 0.5, points: 1.5 });
    assert.equal(breakdown.signals.points, 6.69);
    assert.deepEqual(breakdown.signals.items.map((s) => [s.signalId, s.points]), [['sig_a', 5.85], ['sig_b', 0.84]]);
    assert.deepEqual(breakdown.signals.items[1].weights, { category: 1.2, urgency: 0.7, sentiment: 1, recency: 0.5 });
    assert.equal(breakdown.total, score);
    assert.equal(breakdown.asOf, asOf.toISOString());
  });

  it('a signal halves in weight every 90 days; one dated after asOf counts as new', () => {
    const points = (createdAt: Date) => scoreFeature({
      asOf, votes: 0, distinctEndUsers: 0, signals: [{ id: 's', endUserId: 'e', category: 'ux', urgency: 'medium', sentiment: 'neutral', createdAt }],
    }).breakdown.signals.points;
    assert.equal(points(asOf), 2);
    assert.equal(points(daysAgo(180)), 0.5);
    assert.equal(points(new Date(asOf.getTime() + 86_400_000)), 2);
  });

  it('unknown categories, urgencies and sentiments weigh 1', () => {
    const { breakdown } = scoreFeature({
      asOf, votes: 0, distinctEndUsers: 0, signals: [{ id: 's', endUserId: 'e', category: 'other', urgency: 'whenever', sentiment: 'meh', createdAt: asOf }],
    });
    assert.deepEqual(breakdown.signals.items[0].weights, { category: 1, urgency: 1, sentiment: 1, recency: 1 });
  });

  it('is deterministic, and nothing scores 0', () => {
    const input = { asOf, votes: 2, distinctEndUsers: 2, signals: [] };
    assert.deepEqual(scoreFeature(input), scoreFeature(input));
    assert.equal(scoreFeature({ asOf, votes: 0, distinctEndUsers: 0, signals: [] }).score, 0);
  });

  it('distinct end users are the count the database gives, not the number of votes and signals', () => {
    const { breakdown } = scoreFeature({
      asOf, votes: 1, distinctEndUsers: 1, signals: [{ id: 's', endUserId: 'eu_1', category: 'bug', urgency: 'low', sentiment: null, createdAt: asOf }],
    });
    assert.deepEqual(breakdown.distinctEndUsers, { count: 1, weight: 0.5, points: 0.5 });
  });
});
