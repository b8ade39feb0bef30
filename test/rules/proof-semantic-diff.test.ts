import assert from 'node:assert/strict';
import { semanticDiff } from '../../db/rules/proof-semantic-diff';

describe('proof semantic diff (pure)', () => {
  it('reports words, numbers, rating, attribution and title', () => {
    const diff = semanticDiff(
      { text: 'Support answered within 2 hours, always friendly.', title: 'Fast', rating: 5, attribution: { name: 'Ada', company: 'A Ltd' } },
      { text: 'Support answered within 20 minutes, always helpful.', title: 'Fast', rating: 5, attribution: { name: 'Ada', title: 'CTO' } },
    );
    assert.deepEqual(diff.words, { added: ['helpful', 'minutes'], removed: ['friendly', 'hours'] });
    assert.deepEqual(diff.numbers, { added: ['20'], removed: ['2'] });
    assert.equal(diff.rating, null);
    assert.deepEqual(diff.attribution, { added: ['title'], removed: ['company'], changed: [] });
    assert.equal(diff.title, null);
    assert.equal(diff.changed, true);
  });

  it('an identical wording is unchanged', () => {
    assert.deepEqual(semanticDiff({ text: 'Same.', rating: 4 }, { text: 'Same.', rating: 4 }), {
      changed: false,
      words: { added: [], removed: [] },
      numbers: { added: [], removed: [] },
      rating: null,
      attribution: { added: [], removed: [], changed: [] },
      title: null,
    });
  });

  it('an invented figure shows as a number added, with decimals and percentages kept whole', () => {
    const diff = semanticDiff({ text: 'Faster checkout.' }, { text: 'Checkout 37.5% faster, 1,200 orders.' });
    assert.deepEqual(diff.numbers, { added: ['1,200', '37.5%'], removed: [] });
    assert.deepEqual(diff.words, { added: ['orders'], removed: [] });
  });

  it('reports a rating, title and attribution value that changed', () => {
    const diff = semanticDiff(
      { text: 'Good.', title: 'Old', rating: 3, attribution: { name: 'Ada' } },
      { text: 'Good.', title: 'New', attribution: { name: 'Grace' } },
    );
    assert.deepEqual(diff.rating, { from: 3, to: null });
    assert.deepEqual(diff.title, { from: 'Old', to: 'New' });
    assert.deepEqual(diff.attribution, { added: [], removed: [], changed: ['name'] });
    assert.equal(diff.changed, true);
  });

  it('a change of case or punctuation alone still counts as changed, with no word added or removed', () => {
    const diff = semanticDiff({ text: 'Great support' }, { text: 'Great support!' });
    assert.deepEqual(diff.words, { added: [], removed: [] });
    assert.equal(diff.changed, true);
  });
});
