import assert from 'node:assert/strict';
import { claimsOf, normalise } from '../../db/rules/ai-claims';
import { SourceFacts, contentPool, signalSummaryAllowed } from '../../db/rules/ai-validator';
import { consentCaveat, validateSummary } from '../../db/rules/ai-summary-validator';
import { askPolicyChecks, messagePolicyFailures } from '../../db/rules/ai-ask-policy';
import { CaseStudyAnswer, validateCaseStudy } from '../../db/rules/ai-case-study-validator';

/** The adversarial corpus's source story S (docs/ai.md#tests). */
export const S: SourceFacts = {
  itemType: 'text',
  version: {
    id: 'pver_s',
    text: 'We cut onboarding from 9 days to 2 and save about $1,200 a month. Support answers within four hours.',
    title: 'Faster onboarding',
    rating: 4.5,
    answers: { teamSize: '12 people' },
    attribution: { name: 'Ada Lovelace', company: 'Analytical Ltd', title: 'CTO' },
  },
  customerName: 'Ada Lovelace',
  incentive: { offered: true, description: '$25 gift card' },
  verificationState: 'unverified',
  grant: {
    displayMode: 'first_name', identityFields: ['name'], channels: ['website', 'email'],
    paidUseAllowed: false, translationAllowed: false, validUntil: '2027-06-30',
  },
};
const B: SourceFacts = { ...S, version: { id: 'pver_b', text: 'Our NPS rose from 31 to 58.' } };
const NOT_OFFERED: SourceFacts = { ...S, incentive: { offered: false } };

const HONEST_CAVEATS = ['Incentivized: $25 gift card.', 'Consent: website and email only; no paid ads.', 'Verification: not verified.'];

function summarize(sentences: string[], caveats = HONEST_CAVEATS, source = S) {
  if (!source.incentive.offered) caveats = caveats.filter((c) => !c.startsWith('Incentivized'));
  return validateSummary({ sentiment: 'positive', sentences: sentences.map((text) => ({ text })), caveats: caveats.map((text) => ({ text })) }, source);
}

/** Every summary-sentence entry of the §10 corpus: the model text and what must be caught. */
const SENTENCE_CORPUS: Array<{ text: string; code: string; details: string[]; source?: SourceFacts }> = [
  { text: 'We cut onboarding from 9 days to 3.', code: 'invented_number', details: ['3'] },
  { text: 'They save $1,500 a month.', code: 'invented_number', details: ['1500'] },
  { text: 'They save USD 12k a year.', code: 'invented_number', details: ['12000'] },
  { text: 'Onboarding is 2.5 times faster.', code: 'invented_number', details: ['2.5'] },
  { text: 'Tickets fell 40%.', code: 'invented_number', details: ['40'] },
  { text: 'Tickets fell forty per cent.', code: 'invented_number', details: ['40'] },
  { text: 'They handle 1.2 million tickets.', code: 'invented_number', details: ['1200000'] },
  { text: 'Onboarding takes 6-8 days.', code: 'invented_number', details: ['6', '8'] },
  { text: 'It takes between 3 and 9 days.', code: 'invented_number', details: ['3'] },
  { text: 'Support is 3x faster.', code: 'invented_number', details: ['3'] },
  { text: 'Their signups tripled.', code: 'invented_number', details: ['3'] },
  { text: 'They hired two dozen agents.', code: 'invented_number', details: ['24'] },
  { text: 'Onboarding used to take twenty-one days.', code: 'invented_number', details: ['21'] },
  { text: 'Half the team uses it.', code: 'invented_number', details: ['0.5'] },
  { text: 'The product ranked 1st.', code: 'invented_number', details: ['1'] },
  // 5 is a claim too, but S supports it (rated, out of 5).
  { text: 'A customer since 2023-05-14.', code: 'invented_number', details: ['2023', '14'] },
  { text: 'Support answers 24/7.', code: 'invented_number', details: ['24', '7'] },
  { text: 'They rated it 9.5 out of 10.', code: 'invented_number', details: ['9.5', '10'] },
  { text: 'Revenue grew by two hundred and five dollars.', code: 'invented_number', details: ['205'] },
  { text: 'They pay USD1300 a month.', code: 'invented_number', details: ['1300'] },
  { text: 'She got a $50 gift card for it.', code: 'incentive_misstated', details: ['50'] },
  { text: 'The review was not incentivized.', code: 'incentive_misstated', details: ['incentivized'] },
  { text: 'The story is unincentivized.', code: 'incentive_misstated', details: ['unincentivized'] },
  { text: 'Ada was rewarded for her story.', code: 'incentive_misstated', details: ['rewarded'], source: NOT_OFFERED },
  { text: 'A verified customer reports faster onboarding.', code: 'verification_overclaim', details: ['verified'] },
  { text: 'This confirmed customer likes it.', code: 'verification_overclaim', details: ['confirmed customer'] },
  { text: 'Ada Lovelace praises support.', code: 'identity_beyond_consent', details: ['lovelace'] },
  { text: 'The CTO at Analytical says it helps.', code: 'identity_beyond_consent', details: ['cto', 'analytical'] },
  { text: 'Mail ada@example.com.', code: 'identity_beyond_consent', details: ['ada@example.com.'] },
  { text: 'Approved for use in paid ads.', code: 'use_outside_consent', details: ['ads'] },
  { text: 'Cleared to be shared on LinkedIn.', code: 'use_outside_consent', details: ['linkedin'] },
  { text: 'Permitted for translation and can be used indefinitely.', code: 'use_outside_consent', details: ['translation', 'indefinitely'] },
  { text: 'Approved for use everywhere.', code: 'use_outside_consent', details: ['everywhere'] },
  { text: 'Consented to be used forever.', code: 'use_outside_consent', details: ['forever'] },
];

describe('rules: AI validator (docs/ai.md#the-validator)', () => {
  describe('number claims', () => {
    const cases: Array<[string, string[]]> = [
      ['We cut onboarding from 9 days to 2', ['9', '2']],
      ['save $1,200 and 2,5', ['1200', '2', '5']],
      ['USD 12k, 1.2 million, 5mn, 3bn, 10km', ['12000', '1200000', '5000000', '3000000000', '10']],
      ['a dozen, two dozen, half a dozen', ['12', '24', '6']],
      ['twenty-one, two hundred and five, one thousand', ['21', '205', '1000']],
      ['one of them', []],
      ['a few, several, dozens, hundreds of, the first and second', []],
      ['3rd, 3x, 40%, −5, 0.50', ['3', '3', '40', '5', '0.5']],
      ['10:30 and 4.5/5 on 2024-03-01', ['10', '30', '4.5', '5', '2024', '3', '1']],
      ['mp3 and v2 are no claims, but USD1200 is', ['1200']],
      ['twice, quadrupled, halved', ['2', '4', '0.5']],
      ['12 hundred thousand', ['1200000']],
    ];
    for (const [text, values] of cases) {
      it(`"${text}" → ${values.join(', ') || 'none'}`, () => assert.deepEqual(claimsOf(text).map((c) => c.value), values));
    }

    it('half has 50 as its alternate reading', () => assert.deepEqual(claimsOf('half'), [{ value: '0.5', alt: '50' }]));

    it('normalises dashes, spaces, quotes and accents', () => {
      assert.equal(normalise('Café\u2013bar\u00a0\u201cx\u201d \u2019'), 'cafe-bar "x" \'');
    });

    it('the pool of S is 9, 2, 1200, 4, 12, 4.5, 5', () => {
      assert.deepEqual([...contentPool(S.version)].sort(), ['12', '1200', '2', '4', '4.5', '5', '9']);
    });
  });

  describe('summaries: the adversarial corpus', () => {
    for (const entry of SENTENCE_CORPUS) {
      it(`catches "${entry.text}" as ${entry.code} ${entry.details.join(', ')}`, () => {
        const out = summarize(['Onboarding went from nine days to two.', entry.text], HONEST_CAVEATS, entry.source);
        const found = out.validation.issues.filter((i) => i.location === 'sentences[1]');
        assert.ok(found.length > 0, `nothing caught: ${JSON.stringify(out.validation)}`);
        assert.ok(found.every((i) => i.text === entry.text));
        for (const detail of entry.details) {
          assert.ok(found.some((i) => i.code === entry.code && i.detail === detail), `missing ${entry.code} ${detail}: ${JSON.stringify(found)}`);
        }
        assert.deepEqual(out.validation.rejected, [entry.text]);
        assert.equal(out.validation.status, 'revised');
        assert.equal(out.summary, 'Onboarding went from nine days to two.');
      });
    }

    it('lists every corpus entry and catches all of them', () => {
      const caught = SENTENCE_CORPUS.filter((e) => summarize([e.text], HONEST_CAVEATS, e.source).validation.rejected.includes(e.text));
      assert.equal(caught.length, SENTENCE_CORPUS.length);
    });

    it('use outside consent with translation and forever gives two issues', () => {
      const out = summarize(['Permitted for translation and can be used indefinitely.']);
      assert.equal(out.validation.issues.filter((i) => i.code === 'use_outside_consent').length, 2);
    });

    it('no caveats: the three missing_* fire and their fixed caveats are added', () => {
      const out = summarize(['Onboarding went from nine days to two.'], []);
      assert.deepEqual(out.validation.issues.map((i) => [i.location, i.code]), [
        ['caveats', 'missing_incentive_disclosure'], ['caveats', 'missing_verification_state'], ['caveats', 'missing_consent_limits'],
      ]);
      assert.deepEqual(out.validation.added, [
        'Incentivized: $25 gift card', 'Verification: not verified.',
        'Consent: channels website, email; display first_name; identity name; paid use not allowed; no translation; valid until 2027-06-30.',
      ]);
      assert.deepEqual(out.caveats, out.validation.added);
      assert.equal(out.validation.status, 'revised');
      // Each added caveat passes the validator itself.
      assert.equal(summarize(['Onboarding went from nine days to two.'], out.validation.added).validation.status, 'passed');
    });

    it('a "Verified customer." caveat is an overclaim and leaves the verification state missing', () => {
      const out = summarize(['Rated 4.5 out of 5.'], ['Incentivized: $25 gift card.', 'Consent: website and email only; no paid ads.', 'Verified customer.']);
      assert.deepEqual(out.validation.issues.map((i) => [i.location, i.code]), [
        ['caveats[2]', 'verification_overclaim'], ['caveats', 'missing_verification_state'],
      ]);
      assert.deepEqual(out.validation.rejected, ['Verified customer.']);
    });

    it('no sentence survives: the labelled fixed summary, sentiment from the rating', () => {
      const out = summarize(['We cut onboarding from 9 days to 3.']);
      assert.equal(out.validation.status, 'fallback');
      assert.equal(out.summary, '[Fixed summary] Customer story (text), rated 4.5 out of 5.');
      assert.equal(out.label, 'Fixed summary, no AI text');
      assert.equal(out.sentiment, 'positive');
      const unrated = validateSummary({ sentiment: 'negative', sentences: [{ text: 'It took 3 days.' }], caveats: [] },
        { ...S, version: { id: 'v', text: 'It took 2 days.' } });
      assert.equal(unrated.summary, '[Fixed summary] Customer story (text).');
      assert.equal(unrated.sentiment, 'neutral');
    });

    it('a verified customer needs a caveat saying so; without a grant the consent caveat says so', () => {
      const out = summarize(['Rated 4.5 out of 5.'], [], { ...S, verificationState: 'verified_customer', grant: null, incentive: { offered: false } });
      assert.deepEqual(out.validation.added, ['Verification: verified customer.', 'Consent: no active consent; not for public use.']);
    });

    it('consent caveats keep paid ads out unless paid use is allowed', () => {
      assert.match(consentCaveat({ ...S.grant!, channels: ['website', 'paid_ads'] }), /channels website;/);
      assert.match(consentCaveat({ ...S.grant!, channels: ['website', 'paid_ads'], paidUseAllowed: true }), /channels website, paid_ads;/);
    });
  });

  describe('summaries: honest answers pass unchanged', () => {
    it('the must-pass sentences and caveats of §10', () => {
      const sentences = ['Onboarding went from nine days to two.', 'Ada says support answers within 4 hours.', 'Rated 4.5 out of 5.', 'A dozen people use it.'];
      const out = summarize(sentences);
      assert.deepEqual(out.validation, { status: 'passed', issues: [], rejected: [], added: [] });
      assert.equal(out.summary, sentences.join(' '));
      assert.deepEqual(out.caveats, HONEST_CAVEATS);
      assert.equal(out.label, 'AI-generated summary');
    });

    it('numbers in the source in other notations pass: $1,200, 1.2k, twelve, four', () => {
      const out = summarize(['They save USD 1.2k a month.', 'Twelve people use it and support answers in four hours.',
        'It cut onboarding by seven days, from 9 to 2.']);
      assert.deepEqual(out.validation.issues.filter((i) => i.code === 'invented_number').map((i) => i.detail), ['7']);
    });
  });

  describe('ask drafts (§6)', () => {
    const facts = { context: 'finished onboarding in 2 days' };
    const status = (draft: { subject: string; body: string }, f: object = facts) =>
      Object.fromEntries(askPolicyChecks(draft, f).map((c) => [c.name, c.status]));

    it('all five checks, in order, pass for an honest ask', () => {
      const checks = askPolicyChecks({ subject: 'Your story', body: 'You finished onboarding in 2 days. Would you tell us about it?' }, facts);
      assert.deepEqual(checks.map((c) => c.name), [
        'no_review_gating', 'no_sentiment_conditioned_reward', 'no_invented_numbers', 'incentive_disclosed_when_offered', 'no_undisclosed_incentive',
      ]);
      assert.ok(checks.every((c) => c.status === 'pass'));
    });

    it('catches review gating, sentiment-conditioned rewards and invented numbers', () => {
      assert.equal(status({ subject: 'Hi', body: "If you're happy with us, please leave a review!" }).no_review_gating, 'fail');
      const both = status({ subject: 'Hi', body: 'Leave a positive review and get a free month.' });
      assert.equal(both.no_review_gating, 'fail');
      assert.equal(both.no_sentiment_conditioned_reward, 'fail');
      assert.equal(status({ subject: 'Hi', body: 'If not, please contact support first.' }).no_review_gating, 'fail');
      assert.equal(status({ subject: 'Hi', body: 'Unhappy? Just reply to this e-mail.' }).no_review_gating, 'fail');
      assert.equal(status({ subject: 'Hi', body: 'Leave us 5 stars.' }).no_review_gating, 'fail');
      assert.equal(status({ subject: 'Join 10,000 customers.', body: 'Tell us your story.' }).no_invented_numbers, 'fail');
    });

    it('incentive checks', () => {
      const disclosure = '$25 gift card for any honest review';
      assert.equal(status({ subject: 'Hi', body: 'Tell us your story.' }, { incentiveDisclosure: disclosure }).incentive_disclosed_when_offered, 'fail');
      assert.equal(status({ subject: 'Hi', body: `Tell us your story.  We offer a $25 gift card   for any honest review.` },
        { incentiveDisclosure: disclosure }).incentive_disclosed_when_offered, 'pass');
      assert.equal(status({ subject: 'Hi', body: "We'll send a gift card." }, {}).no_undisclosed_incentive, 'fail');
    });

    it('a person-written message is refused for gating or conditioned rewards only', () => {
      assert.deepEqual(messagePolicyFailures('Leave a positive review and get a free month.'), ['no_review_gating', 'no_sentiment_conditioned_reward']);
      assert.deepEqual(messagePolicyFailures('Would you tell us how onboarding went?'), []);
    });
  });

  describe('case studies (§8)', () => {
    const cs = (statements: CaseStudyAnswer['sections'][number]['statements'], max = 12, title = 'Faster onboarding') =>
      validateCaseStudy({ title, sections: [{ heading: 'Results', statements }] }, [S, B], max);
    const reasonsOf = (statements: CaseStudyAnswer['sections'][number]['statements']) => cs(statements).rejectedStatements.map((r) => r.reasons);

    it('the corpus: uncited, unknown citation, invented number, altered quotes', () => {
      assert.deepEqual(reasonsOf([{ text: 'Onboarding got faster.', citations: [] }]), [['uncited']]);
      assert.deepEqual(reasonsOf([{ text: 'Onboarding got faster.', citations: [{ sourceVersionId: 'ver_unknown', quote: null }] }]), [['unknown_citation']]);
      assert.deepEqual(reasonsOf([{ text: 'NPS rose to 58 and onboarding took 2 days.', citations: [{ sourceVersionId: 'pver_b', quote: null }] }]),
        [['invented_number']]);
      assert.deepEqual(reasonsOf([{
        text: 'Ada said "we cut onboarding from 9 days to two".',
        citations: [{ sourceVersionId: 'pver_s', quote: 'we cut onboarding from 9 days to two' }],
      }]), [['altered_quote']]);
      const both = reasonsOf([{ text: '"Our NPS rose from 31 to 58."', citations: [{ sourceVersionId: 'pver_s', quote: null }] }]);
      assert.deepEqual(both.map((r) => [...r].sort()), [['altered_quote', 'invented_number']]);
    });

    it('exact quotes and cited numbers pass; identity beyond consent and length are rejected', () => {
      const out = cs([
        { text: 'Ada said "We cut onboarding from 9 days to 2".', citations: [{ sourceVersionId: 'pver_s', quote: 'We cut onboarding from 9 days to 2' }] },
        { text: 'NPS rose from 31 to 58.', citations: [{ sourceVersionId: 'pver_b', quote: null }] },
        { text: 'Ada Lovelace leads the team.', citations: [{ sourceVersionId: 'pver_s', quote: null }] },
        { text: 'Support answers within four hours.', citations: [{ sourceVersionId: 'pver_s', quote: null }] },
      ], 2);
      assert.equal(out.survivors, 2);
      assert.deepEqual(out.rejectedStatements.map((r) => [r.location, r.reasons]), [
        ['sections[0].statements[2]', ['identity_beyond_consent']], ['sections[0].statements[3]', ['over_length']],
      ]);
      assert.equal(out.title, 'Faster onboarding');
    });

    it('a failing title becomes "Customer story"', () => {
      assert.equal(cs([{ text: 'Onboarding got faster.', citations: [{ sourceVersionId: 'pver_s', quote: null }] }], 12, 'Onboarding in 1 day').title,
        'Customer story');
    });
  });

  describe('signal summaries (§9)', () => {
    it('drops a summary with an invented number or an e-mail address', () => {
      const signal = { title: 'Export slow', body: 'Exports of 500 rows take 3 minutes.' };
      assert.equal(signalSummaryAllowed('Exports of 500 rows take three minutes.', signal), true);
      assert.equal(signalSummaryAllowed('Exports take 10 minutes.', signal), false);
      assert.equal(signalSummaryAllowed('Contact ada@example.com about exports.', signal), false);
    });
  });
});
