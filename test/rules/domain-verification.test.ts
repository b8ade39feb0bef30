import assert from 'node:assert/strict';
import { judgeDomain } from '../../db/rules/domain-verification';

describe('rules: custom domain verification', () => {
  const host = 'stories.example.com';
  const ok = { txt: [['proof-verify=abc123']], cname: ['collect.proof.example.'] };

  it('verified with the TXT and a CNAME to the collection host (case and trailing dot ignored)', () => {
    assert.deepEqual(judgeDomain(host, 'abc123', 'Collect.Proof.Example', ok), { verified: true, problems: [] });
  });

  it('a TXT value split into strings counts joined; other TXT records are ignored', () => {
    const split = { ...ok, txt: [['v=spf1 -all'], ['proof-verify=', 'abc123']] };
    assert.equal(judgeDomain(host, 'abc123', 'collect.proof.example', split).verified, true);
  });

  it('names every missing record', () => {
    const none = judgeDomain(host, 'abc123', 'collect.proof.example', { txt: null, cname: null });
    assert.deepEqual(none.problems, [
      'TXT _proof-verify.stories.example.com must be proof-verify=abc123',
      'CNAME stories.example.com must point to collect.proof.example',
    ]);
    const wrong = judgeDomain(host, 'abc123', 'collect.proof.example', { txt: [['proof-verify=other']], cname: ['elsewhere.example'] });
    assert.equal(wrong.verified, false);
    assert.match(wrong.problems[1], /it points to elsewhere\.example/);
  });
});
