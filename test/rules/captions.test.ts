import assert from 'node:assert/strict';
import { automaticVttProblem, cueProblem, cuesToVtt, escapeCueText } from '../../db/rules/captions';

describe('captions (db/rules/captions)', () => {
  it('writes WebVTT with hour timestamps and the language', () => {
    assert.equal(cuesToVtt([{ startMs: 0, endMs: 1500, text: 'Hello' }, { startMs: 3_725_042, endMs: 3_726_000, text: 'Later' }], 'en-GB'),
      'WEBVTT\nLanguage: en-GB\n\n00:00:00.000 --> 00:00:01.500\nHello\n\n01:02:05.042 --> 01:02:06.000\nLater\n');
  });

  it('escapes markup and arrows and collapses blank lines, which would end a cue', () => {
    assert.equal(escapeCueText('a --> b <i>&\n\n c'), 'a --&gt; b &lt;i&gt;&amp;\nc');
  });

  it('refuses cues that end before they start, are blank or go backwards', () => {
    assert.equal(cueProblem([{ startMs: 0, endMs: 10, text: 'ok' }]), null);
    assert.match(String(cueProblem([{ startMs: 10, endMs: 10, text: 'x' }])), /endMs/);
    assert.match(String(cueProblem([{ startMs: 0, endMs: 10, text: ' \n ' }])), /blank/);
    assert.match(String(cueProblem([{ startMs: 50, endMs: 60, text: 'a' }, { startMs: 10, endMs: 20, text: 'b' }])), /before/);
  });

  it('keeps a provider track only when it is WebVTT with cues', () => {
    assert.equal(automaticVttProblem('WEBVTT\n\n00:00.000 --> 00:01.000\nHi\n'), null);
    assert.equal(automaticVttProblem('\uFEFFWEBVTT - made\n\n00:00.000 --> 00:01.000\nHi'), null);
    assert.match(String(automaticVttProblem('{"text":"hi"}')), /not WebVTT/);
    assert.match(String(automaticVttProblem('WEBVTT\n\n')), /no cues/);
    assert.match(String(automaticVttProblem(42)), /not text/);
  });
});
