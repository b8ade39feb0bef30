import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, loadConfig } from '../../runtime/config';
import { temporalConnectionOptions } from '../../runtime/temporal-connection';
import { ROOT, runCommand } from '../support/role-processes';
import { ctx } from '../support/root-hooks';

const CERT = '-----BEGIN CERTIFICATE-----\nMIIBcert\n-----END CERTIFICATE-----\n';
const KEY = '-----BEGIN PRIVATE KEY-----\nMIIBkey\n-----END PRIVATE KEY-----\n';
const optionsFor = (env: Record<string, string>) => temporalConnectionOptions(loadConfig(env), 'ns.acct.tmprl.cloud:7233');

describe('Temporal Cloud and TLS: the connection options client, worker and CLI use', () => {
  let dir: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sv-tls-'));
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('nothing set: plain gRPC to the address', () => {
    assert.deepEqual(optionsFor({}), { address: 'ns.acct.tmprl.cloud:7233' });
  });

  it('TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY as files: mTLS with that pair', () => {
    fs.writeFileSync(path.join(dir, 'client.pem'), CERT);
    fs.writeFileSync(path.join(dir, 'client.key'), KEY);
    const options = optionsFor({ TEMPORAL_TLS_CERT: path.join(dir, 'client.pem'), TEMPORAL_TLS_KEY: path.join(dir, 'client.key'),
      TEMPORAL_NAMESPACE: 'ns.acct' });
    assert.equal(options.apiKey, undefined);
    assert.ok(typeof options.tls === 'object');
    assert.equal(Buffer.from(options.tls.clientCertPair!.crt).toString(), CERT);
    assert.equal(Buffer.from(options.tls.clientCertPair!.key).toString(), KEY);
    assert.equal(loadConfig({ TEMPORAL_NAMESPACE: 'ns.acct' }).temporalNamespace, 'ns.acct');
  });

  it('PEM text inline (with \\n escapes, as one line of an .env file) works the same', () => {
    const options = optionsFor({ TEMPORAL_TLS_CERT: CERT.replace(/\n/g, '\\n'), TEMPORAL_TLS_KEY: KEY });
    assert.ok(typeof options.tls === 'object');
    assert.equal(Buffer.from(options.tls.clientCertPair!.crt).toString(), CERT);
  });

  it('a CA and a server name go into the TLS settings', () => {
    fs.writeFileSync(path.join(dir, 'ca.pem'), CERT);
    const options = optionsFor({ TEMPORAL_TLS_CERT: CERT, TEMPORAL_TLS_KEY: KEY, TEMPORAL_TLS_CA: path.join(dir, 'ca.pem'),
      TEMPORAL_TLS_SERVER_NAME: 'temporal.internal' });
    assert.ok(typeof options.tls === 'object');
    assert.equal(Buffer.from(options.tls.serverRootCACertificate!).toString(), CERT);
    assert.equal(options.tls.serverNameOverride, 'temporal.internal');
  });

  it('TEMPORAL_API_KEY: TLS on, the key as the API key', () => {
    assert.deepEqual(optionsFor({ TEMPORAL_API_KEY: 'tcak_secret' }), { address: 'ns.acct.tmprl.cloud:7233', tls: {}, apiKey: 'tcak_secret' });
  });

  it('TEMPORAL_API_KEY set but empty (or blank) is unset: plain gRPC, no TLS without a key', () => {
    for (const value of ['', '  ']) {
      assert.deepEqual(optionsFor({ TEMPORAL_API_KEY: value }), { address: 'ns.acct.tmprl.cloud:7233' }, JSON.stringify(value));
      assert.deepEqual(temporalConnectionOptions({ ...loadConfig({}), temporalApiKey: value }, 'temporal:7233'), { address: 'temporal:7233' },
        `${JSON.stringify(value)} handed to the options directly`);
    }
    assert.doesNotThrow(() => loadConfig({ TEMPORAL_API_KEY: '', TEMPORAL_TLS_CERT: CERT, TEMPORAL_TLS_KEY: KEY }), 'an empty key is not a second credential');
  });

  it('a certificate without its key, both ways at once, or an unreadable file: a one-line configuration error', () => {
    assert.throws(() => loadConfig({ TEMPORAL_TLS_CERT: CERT }), (e: Error) =>
      e instanceof ConfigError && /TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY are set together/.test(e.message));
    assert.throws(() => loadConfig({ TEMPORAL_TLS_KEY: KEY }), ConfigError);
    assert.throws(() => loadConfig({ TEMPORAL_TLS_CERT: CERT, TEMPORAL_TLS_KEY: KEY, TEMPORAL_API_KEY: 'k' }), /not both/);
    assert.throws(() => optionsFor({ TEMPORAL_TLS_CERT: path.join(dir, 'missing.pem'), TEMPORAL_TLS_KEY: KEY }),
      (e: Error) => e instanceof ConfigError && /TEMPORAL_TLS_CERT is neither PEM text nor a readable file \(ENOENT\)/.test(e.message));
  });

  it('sv temporal search-attributes registers the tenant search attributes through the same options', async function () {
    this.timeout(60_000);
    const res = await runCommand([process.execPath, path.join(ROOT, 'bin', 'sv.js'), 'temporal', 'search-attributes', '--json'],
      { TEMPORAL_ADDRESS: ctx.temporalAddress });
    assert.equal(res.code, 0, res.stderr);
    assert.deepEqual(JSON.parse(res.stdout), { namespace: 'default', searchAttributes: ['OrganizationId', 'ProductId'] });
    const bad = await runCommand([process.execPath, path.join(ROOT, 'bin', 'sv.js'), 'temporal', 'search-attributes'],
      { TEMPORAL_ADDRESS: ctx.temporalAddress, TEMPORAL_TLS_CERT: CERT });
    assert.equal(bad.code, 1);
    assert.match(bad.stderr.trim(), /^sv: configuration: TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY are set together/);
  });
});
