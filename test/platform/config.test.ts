import assert from 'node:assert/strict';
import { ConfigError, loadConfig } from '../../runtime/config';
import { WEBHOOK_MAX_ATTEMPTS, backoffMs } from '../../workflows/webhooks/webhook-delivery-workflow';

describe('configuration defaults are the spec\'s values', () => {
  it('rate limit 120 per minute; webhooks 10 s per attempt, 30 s backoff doubling to a 1 h cap, 8 attempts', () => {
    const config = loadConfig({});
    assert.equal(config.rateLimitPerMinute, 120);
    assert.equal(config.webhookTimeoutMs, 10_000);
    assert.equal(config.webhookAllowPrivateTargets, false);
    assert.equal(config.environment, 'production');
    assert.equal(WEBHOOK_MAX_ATTEMPTS, 8);
    const input = { deliveryId: 'whd_x', timeoutMs: config.webhookTimeoutMs, retryInitialMs: config.webhookRetryInitialMs, retryMaxMs: config.webhookRetryMaxMs,
      maxAttempts: WEBHOOK_MAX_ATTEMPTS };
    const waits = Array.from({ length: WEBHOOK_MAX_ATTEMPTS - 1 }, (_, i) => backoffMs(input, i + 1) / 1000);
    assert.deepEqual(waits, [30, 60, 120, 240, 480, 960, 1920]);
    assert.equal(backoffMs(input, 12), 3_600_000, 'capped at one hour');
  });

  it('AI: 3 attempts from 2 s doubling, 30 s per call, 1000 operations a month, no evaluated models', () => {
    const config = loadConfig({});
    assert.deepEqual([config.aiMaxAttempts, config.aiRetryInitialMs, config.aiTimeoutMs], [3, 2_000, 30_000]);
    assert.equal(config.aiMonthlyAllowance, 1_000);
    assert.deepEqual(config.aiEvaluatedModels, []);
    assert.deepEqual(loadConfig({ SV_AI_EVALUATED_MODELS: 'gpt-4o, gpt-4o-mini,' }).aiEvaluatedModels, ['gpt-4o', 'gpt-4o-mini']);
    assert.throws(() => loadConfig({ SV_AI_MONTHLY_ALLOWANCE: '-1' }), /SV_AI_MONTHLY_ALLOWANCE/);
  });

  it('inbox streams: 5 per end user, 1000 per process; each a whole number in range', () => {
    const config = loadConfig({});
    assert.deepEqual([config.inboxStreamsPerEndUser, config.inboxStreamsPerProcess], [5, 1_000]);
    const set = loadConfig({ SV_INBOX_STREAMS_PER_END_USER: '2', SV_INBOX_STREAMS_PER_PROCESS: '50' });
    assert.deepEqual([set.inboxStreamsPerEndUser, set.inboxStreamsPerProcess], [2, 50]);
    for (const [name, bad] of [['SV_INBOX_STREAMS_PER_END_USER', '0'], ['SV_INBOX_STREAMS_PER_END_USER', '101'], ['SV_INBOX_STREAMS_PER_PROCESS', '0'],
      ['SV_INBOX_STREAMS_PER_PROCESS', 'many']]) {
      assert.throws(() => loadConfig({ [name]: bad }), (err: Error) => err instanceof ConfigError && err.message.includes(name), `${name}=${bad}`);
    }
  });

  it('links point home: the collect page, the stream source base and the OpenAPI server follow HOST and PORT', () => {
    const defaults = loadConfig({});
    assert.equal(defaults.publicBaseUrl, 'http://127.0.0.1:3000');
    assert.equal(defaults.collectPageUrl, 'http://127.0.0.1:3000/collect');
    assert.equal(defaults.proofStreamSourceBaseUrl, 'http://127.0.0.1:3000');
    const moved = loadConfig({ PORT: '4100', HOST: 'proof.internal' });
    assert.equal(moved.collectPageUrl, 'http://proof.internal:4100/collect');
    assert.equal(moved.proofStreamSourceBaseUrl, 'http://proof.internal:4100');
    assert.equal(loadConfig({ HOST: '0.0.0.0', PORT: '8080' }).collectPageUrl, 'http://127.0.0.1:8080/collect', 'a wildcard listens on loopback too');
    assert.equal(loadConfig({ HOST: '::1', PORT: '8080' }).publicBaseUrl, 'http://[::1]:8080');
    const set = loadConfig({ PORT: '4100', PROOF_COLLECT_PAGE_URL: 'https://stories.example.com/c/', PROOF_STREAM_SOURCE_BASE_URL: 'https://api.example.com' });
    assert.equal(set.collectPageUrl, 'https://stories.example.com/c', 'a set value wins');
    assert.equal(set.proofStreamSourceBaseUrl, 'https://api.example.com');
  });

  it('refuses a malformed value with a message naming the variable', () => {
    assert.throws(() => loadConfig({ PORT: 'abc' }), (err: Error) => err instanceof ConfigError && /PORT/.test(err.message));
    assert.throws(() => loadConfig({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'yes' }), /WEBHOOK_ALLOW_PRIVATE_TARGETS/);
  });

  it('reads SV_TRUST_PROXY as off, any proxy, a hop count or addresses, and the public rate limit', () => {
    assert.equal(loadConfig({}).trustProxy, false);
    assert.equal(loadConfig({}).publicRateLimitPerMinute, 600);
    assert.equal(loadConfig({ PUBLIC_RATE_LIMIT_PER_MINUTE: '30' }).publicRateLimitPerMinute, 30);
    assert.equal(loadConfig({ SV_TRUST_PROXY: 'false' }).trustProxy, false);
    assert.equal(loadConfig({ SV_TRUST_PROXY: 'true' }).trustProxy, true);
    assert.equal(loadConfig({ SV_TRUST_PROXY: '2' }).trustProxy, 2);
    assert.deepEqual(loadConfig({ SV_TRUST_PROXY: '10.0.0.0/8, 127.0.0.1,loopback,::1' }).trustProxy, ['10.0.0.0/8', '127.0.0.1', 'loopback', '::1']);
    for (const bad of ['10.0.0.300', 'proxy.example', '10.0.0.0/99']) {
      assert.throws(() => loadConfig({ SV_TRUST_PROXY: bad }), (err: Error) => err instanceof ConfigError && /SV_TRUST_PROXY/.test(err.message), bad);
    }
  });
});
