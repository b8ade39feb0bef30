import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import path from 'node:path';
import { DataSource } from 'typeorm';
import { signIdentityToken } from '../api/plugins/identity-token';
import { DEFAULT_PAGE_SIZE } from '../db/pagination';
import { rotateSigningKey } from '../db/proof/proof-signing';
import { createSession } from '../db/platform/sessions';
import { issueSignInLink } from '../db/platform/sign-in-links';
import {
  DEFAULT_KEY_DAYS, createServiceKey, listServiceKeys, revokeServiceKey, rotateServiceKey,
} from '../db/platform/service-keys';
import {
  createOrganization, createProduct, createTeammate, getProduct, productEnvironments, setProductActive,
} from '../db/platform/tenancy';
import { Config, ConfigError, loadConfig } from '../runtime/config';
import { startEmbeddedPostgres } from '../runtime/embedded-postgres';
import { ServiceError } from '../runtime/service-error';
import { openDatabase } from '../db/data-source';
import { EMBEDDED_DATABASE, databaseUrlOf, temporalAddressOf } from '../runtime/services';
import { temporalConnectionOptions } from '../runtime/temporal-connection';
import { TENANT_SEARCH_ATTRIBUTES, ensureTenantSearchAttributes } from '../runtime/workflow-memo';
import { assertSecretKeysConfigured, generateKeyRingValue } from '../runtime/secret-box';

const USAGE = `usage: sv <command> [options] [--json]

  org create --name NAME [--sponsored]
  product create --org ORG_ID --name NAME
  product activate PRODUCT_ID | product deactivate PRODUCT_ID
  teammate create --org ORG_ID --email EMAIL --role owner|admin|member
  teammate sign-in-link --teammate TEAMMATE_ID   (a console sign-in link without e-mail: once, 15 minutes)
  session create --teammate TEAMMATE_ID
  key create --org ORG_ID [--product PRODUCT_ID] --env ENV --scopes a,b,c [--expires-days N]
  key rotate KEY_ID | key revoke KEY_ID
  key list --org ORG_ID [--limit N] [--cursor C]
  identity-secret --product PRODUCT_ID
  identity-token --product PRODUCT_ID --sub END_USER_ID [--ttl SECONDS] [--nonce N]
  signing-key rotate   (new Ed25519 key for manifests and receipts; old keys keep verifying)
  secret-keys generate (a new SV_SECRET_KEYS value: one 32-byte key; rotation: put it first, keep the old)
  temporal search-attributes  (registers the search attributes the workflows set, on TEMPORAL_ADDRESS's namespace)

Uses the server's configuration: DATABASE_URL (then SV_SECRET_KEYS too), or the embedded PostgreSQL under SV_DATA_DIR.`;

class UsageError extends Error {}

const OPTIONS = {
  json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' }, sponsored: { type: 'boolean' },
  name: { type: 'string' }, org: { type: 'string' }, product: { type: 'string' }, email: { type: 'string' },
  role: { type: 'string' }, teammate: { type: 'string' }, env: { type: 'string' }, scopes: { type: 'string' },
  'expires-days': { type: 'string' }, limit: { type: 'string' }, cursor: { type: 'string' },
  sub: { type: 'string' }, ttl: { type: 'string' }, nonce: { type: 'string' },
} as const;

type Values = { [K in keyof typeof OPTIONS]?: (typeof OPTIONS)[K]['type'] extends 'boolean' ? boolean : string };

function need(values: Values, name: keyof Values): string {
  const value = values[name];
  if (typeof value !== 'string' || value.trim() === '') throw new UsageError(`--${name} is required`);
  return value;
}

function wholeNumber(raw: string | undefined, name: string, fallback: number): number {
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw)) throw new UsageError(`--${name} must be a whole number`);
  return Number(raw);
}

/** `proof:read` is short for `service:proof:read`. */
function scopesOf(raw: string): string[] {
  return raw.split(',').map((s) => s.trim()).filter(Boolean).map((s) => (s.startsWith('service:') ? s : `service:${s}`));
}

type Output = { json: unknown; text: string };

async function run(ds: DataSource, config: Config, words: string[], values: Values): Promise<Output> {
  const [noun, verb, id] = words;
  const command = `${noun ?? ''} ${verb ?? ''}`.trim();
  const positional = () => {
    if (!id) throw new UsageError(`sv ${command} needs an id`);
    return id;
  };
  switch (command) {
    case 'org create': {
      const org = await createOrganization(ds, { name: need(values, 'name'), sponsored: values.sponsored === true });
      return { json: org, text: `organization ${org.id} "${org.name}"${org.sponsored ? ' (sponsored)' : ''}` };
    }
    case 'product create': {
      const product = await createProduct(ds, { organizationId: need(values, 'org'), name: need(values, 'name') });
      const environments = await productEnvironments(ds, product.id);
      const { identitySecret: _secret, ...shown } = product;
      return { json: { ...shown, environments }, text: `product ${product.id} "${product.name}" (environments: ${environments.join(', ')})` };
    }
    case 'product activate':
    case 'product deactivate': {
      const product = await setProductActive(ds, positional(), verb === 'activate');
      return { json: { id: product.id, active: product.active }, text: `product ${product.id} ${product.active ? 'active' : 'inactive'}` };
    }
    case 'teammate create': {
      const teammate = await createTeammate(ds, { organizationId: need(values, 'org'), email: need(values, 'email'), role: need(values, 'role') });
      return { json: teammate, text: `teammate ${teammate.id} ${teammate.email} (${teammate.role})` };
    }
    case 'teammate sign-in-link': {
      const link = await issueSignInLink(ds, need(values, 'teammate'), config.consoleUrl);
      return { json: { url: link.url, expiresAt: link.expiresAt }, text: `${link.url}\n(works once, until ${link.expiresAt})` };
    }
    case 'session create': {
      const session = await createSession(ds, need(values, 'teammate'), config.sessionTtlHours);
      return { json: session, text: `cookie: ${session.cookie}\ncsrfToken: ${session.csrfToken}\nexpiresAt: ${session.expiresAt}` };
    }
    case 'key create': {
      const issued = await createServiceKey(ds, {
        organizationId: need(values, 'org'),
        productId: values.product ?? null,
        environment: need(values, 'env'),
        scopes: scopesOf(need(values, 'scopes')),
        expiresInDays: wholeNumber(values['expires-days'], 'expires-days', DEFAULT_KEY_DAYS),
      });
      return { json: issued, text: `key ${issued.key.id} (shown once, store it now):\n${issued.secret}` };
    }
    case 'key rotate': {
      const issued = await rotateServiceKey(ds, positional());
      return { json: issued, text: `key ${issued.key.id} replaces ${issued.key.rotatedFromId} (shown once):\n${issued.secret}` };
    }
    case 'key revoke': {
      const key = await revokeServiceKey(ds, positional());
      return { json: key, text: `key ${key.id} revoked at ${key.revokedAt}` };
    }
    case 'key list': {
      const page = await listServiceKeys(ds, need(values, 'org'), {
        limit: Math.min(100, Math.max(1, wholeNumber(values.limit, 'limit', DEFAULT_PAGE_SIZE))), cursor: values.cursor,
      });
      const lines = page.data.map((k) => `${k.id} ${k.prefix}… ${k.environment} ${k.scopes.join(',')} expires ${k.expiresAt}${k.revokedAt ? ' REVOKED' : ''}`);
      if (page.nextCursor) lines.push(`more: --cursor ${page.nextCursor}`);
      return { json: page, text: lines.join('\n') || 'no keys' };
    }
    case 'identity-secret': {
      const product = await getProduct(ds, need(values, 'product'));
      const json = { productId: product.id, algorithm: 'HS256', keyId: product.identityKeyId, secret: product.identitySecret };
      return { json, text: `kid: ${json.keyId}\nsecret: ${json.secret}\nalgorithm: HS256` };
    }
    case 'signing-key rotate': {
      const kid = await rotateSigningKey(ds);
      return { json: { kid }, text: `signing key ${kid} is active; retired keys stay in the key set for verification` };
    }
    case 'identity-token': {
      const product = await getProduct(ds, need(values, 'product'));
      const now = Math.floor(Date.now() / 1000);
      const ttl = wholeNumber(values.ttl, 'ttl', 300);
      const token = signIdentityToken(product.identityKeyId, product.identitySecret, {
        sub: need(values, 'sub'), iat: now, exp: now + ttl, nonce: values.nonce ?? `n-${now}-${Math.random().toString(36).slice(2)}`,
      });
      return { json: { token, expiresAt: new Date((now + ttl) * 1000).toISOString() }, text: token };
    }
    default:
      throw new UsageError(command ? `unknown command "sv ${command}"` : 'no command given');
  }
}

/** What a worker does at start, for a deployment that registers them once before any role starts. */
async function registerSearchAttributes(config: Config): Promise<string[]> {
  const connection = await Connection.connect(temporalConnectionOptions(config, temporalAddressOf(config)));
  try {
    await ensureTenantSearchAttributes(new Client({ connection, namespace: config.temporalNamespace }), config.temporalNamespace);
    return TENANT_SEARCH_ATTRIBUTES.map((key) => key.name);
  } finally {
    await connection.close();
  }
}

/** Connects to DATABASE_URL, or to the embedded PostgreSQL, starting it for this command when it is not running. */
async function withDatabase<T>(config: Config, fn: (ds: DataSource) => Promise<T>): Promise<T> {
  let stopEmbedded: (() => Promise<void>) | undefined;
  let ds: DataSource;
  try {
    ds = await openDatabase(databaseUrlOf(config), 2);
  } catch (err) {
    if (config.databaseUrl || (err as { code?: string }).code !== 'ECONNREFUSED') throw err;
    const pg = await startEmbeddedPostgres({
      dir: path.join(config.dataDir, 'pg'), port: config.embeddedPgPort, persistent: true, fixedDir: config.dataDirFromEnv,
    });
    stopEmbedded = pg.stop;
    await pg.createDatabase(EMBEDDED_DATABASE);
    ds = await openDatabase(pg.url(EMBEDDED_DATABASE), 2);
  }
  try {
    return await fn(ds);
  } finally {
    await ds.destroy();
    await stopEmbedded?.();
  }
}

async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (err) {
    console.error(`sv: ${(err as Error).message} (see sv --help)`);
    return 2;
  }
  const values = parsed.values as Values;
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  try {
    if (parsed.positionals.join(' ') === 'secret-keys generate') {
      const value = generateKeyRingValue();
      console.log(values.json ? JSON.stringify({ secretKeys: value }) : value);
      return 0;
    }
    const config = loadConfig();
    if (parsed.positionals.join(' ') === 'temporal search-attributes') {
      const names = await registerSearchAttributes(config);
      console.log(values.json ? JSON.stringify({ namespace: config.temporalNamespace, searchAttributes: names })
        : `${names.join(', ')} registered on ${config.temporalNamespace}`);
      return 0;
    }
    assertSecretKeysConfigured(config);
    const out = await withDatabase(config, (ds) => run(ds, config, parsed.positionals, values));
    console.log(values.json ? JSON.stringify(out.json, null, 2) : out.text);
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      console.error(`sv: ${err.message} (see sv --help)`);
      return 2;
    }
    if (err instanceof ServiceError) {
      const details = Array.isArray(err.details) ? ` (${err.details.map((d: { path: string; message: string }) => `${d.path}: ${d.message}`).join('; ')})` : '';
      console.error(`sv: ${err.code}: ${err.message}${details}`);
    } else if (err instanceof ConfigError) {
      console.error(`sv: configuration: ${err.message}`);
    } else {
      console.error(`sv: ${(err as Error).message ?? String(err)}`);
    }
    return 1;
  }
}

main(process.argv.slice(2)).then((code) => process.exit(code), (err: unknown) => {
  console.error(`sv: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
