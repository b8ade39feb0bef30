import assert from 'node:assert/strict';
import {
  BANDS, bandOf, completeDefinition, flowContentHash, incentiveConditionReason, routeScore, routingIssues,
} from '../../db/rules/collection-flow';

describe('collection flow rules', () => {
  it('every score of each scale falls in exactly one band, each with a follow-up (every band is routed)', () => {
    const cases: Array<['nps' | 'five_star', number, string, string]> = [
      ['nps', 0, 'detractor', 'support_room'], ['nps', 6, 'detractor', 'support_room'], ['nps', 7, 'passive', 'check_in'],
      ['nps', 8, 'passive', 'check_in'], ['nps', 9, 'promoter', 'story_invite'], ['nps', 10, 'promoter', 'story_invite'],
      ['five_star', 1, 'negative', 'support_room'], ['five_star', 2, 'negative', 'support_room'], ['five_star', 3, 'neutral', 'check_in'],
      ['five_star', 4, 'positive', 'story_invite'], ['five_star', 5, 'positive', 'story_invite'],
    ];
    for (const [scale, score, band, followUp] of cases) assert.deepEqual(bandOf(scale, score), { band, followUp }, `${scale} ${score}`);
    assert.equal(bandOf('nps', 11), null);
    assert.equal(bandOf('five_star', 0), null);
    assert.equal(bandOf('nps', 6.5), null);
    const d = completeDefinition('F', { rating: { scale: 'nps', required: true } });
    for (const { band } of BANDS.nps) assert.ok(d.routing[band], `${band} routed by default`);
    assert.deepEqual(routeScore({ routing: { ...d.routing, detractor: 'check_in' } }, 'nps', 2), { band: 'detractor', followUp: 'check_in' });
  });

  it('a rating that leaves a band unrouted, an unknown band or a repeated question is an issue', () => {
    const d = completeDefinition('F', { rating: { scale: 'five_star', required: true },
      routing: { negative: 'support_room', neutral: 'check_in', happy: 'story_invite' } });
    d.questions = [{ questionId: 'q1', version: 1, required: true }, { questionId: 'q1', version: 2, required: false }];
    const paths = routingIssues(d).map((i) => i.path);
    assert.deepEqual(paths.sort(), ['definition.questions[1]', 'definition.routing.happy', 'definition.routing.positive'].sort());
  });

  it('a reward described as depending on a rating, band or sentiment is refused; a neutral one passes', () => {
    for (const text of ['Gift card for promoters', '$10 if you rate us 5 stars', 'Credit for positive reviews', 'Only for happy customers',
      'Depends on your NPS score']) {
      assert.ok(incentiveConditionReason(text), text);
    }
    assert.equal(incentiveConditionReason('A $20 gift card for every response'), null);
  });

  it('the content hash covers the definition and the incentive', () => {
    const d = completeDefinition('F', {});
    assert.notEqual(flowContentHash(d, { offered: false }), flowContentHash({ ...d, title: 'G' }, { offered: false }));
    assert.notEqual(flowContentHash(d, { offered: false }), flowContentHash(d,
      { offered: true, kind: 'donation', description: 'A donation', unlockKey: null, appliesTo: 'any_response' }));
  });
});
