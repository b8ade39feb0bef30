import { createHash } from 'node:crypto';
import { Client } from 'pg';
import type { DataSource } from 'typeorm';
import { openDatabase } from '../db/data-source';
import { createEndpoint } from '../db/webhooks/webhook-endpoints';
import { createOrganization, createProduct, createTeammate } from '../db/platform/tenancy';
import { SeedLog, SeedSize, scaled, seedWorkspace } from './scale-seed';

// The two workspaces of bench:seed and bench:scale, in a database of their own that a second run reuses.

/**
 * The key ring that seals the seeded products' identity secrets: SV_SECRET_KEYS when set, else one derived from a
 * fixed phrase, so that every run of the benchmark (and the service it starts) opens what the seeder sealed.
 * The database holds generated data only.
 */
export const BENCH_SECRET_KEYS = process.env.SV_SECRET_KEYS
  ?? `bench:${createHash('sha256').update('customer loop bench:scale key ring').digest('base64')}`;
process.env.SV_SECRET_KEYS = BENCH_SECRET_KEYS;

/** DATABASE_URL names the bench database (created when missing); by default sv_bench_scale on the local server. */
export const BENCH_DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/sv_bench_scale';

/** The large workspace's signals (the 1,000,000); the small one has a thousandth of everything. */
export const LARGE_SIGNALS = Number(process.env.BENCH_SIGNALS ?? 1_000_000);

export interface ScaleWorkspace {
  label: 'large' | 'small';
  size: SeedSize;
  organizationId: string;
  productId: string;
  teammateIds: string[];
  endpointIds: string[];
  tag: string;
}

const TEAMMATES = 10;
const ENDPOINTS = 3;

/** Connects to the bench database, creating it first if it is missing, and applies the migrations. */
export async function openBenchDatabase(): Promise<DataSource> {
  const url = new URL(BENCH_DATABASE_URL);
  const name = decodeURIComponent(url.pathname.slice(1));
  const server = new URL(url);
  server.pathname = '/postgres';
  const admin = new Client({ connectionString: server.toString() });
  await admin.connect();
  try {
    const found = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount === 0) await admin.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`);
  } finally {
    await admin.end();
  }
  return openDatabase(BENCH_DATABASE_URL, 4);
}

const seededName = (label: string, signals: number) => `Scale bench ${label} (${signals} signals)`;

/** A seeded workspace found by its name, which the seed sets only in the transaction that fills it. */
export async function findWorkspace(ds: DataSource, label: ScaleWorkspace['label'], signals: number): Promise<ScaleWorkspace | null> {
  const [org]: Array<{ id: string }> = await ds.query('SELECT id FROM organizations WHERE name = $1 ORDER BY created_at LIMIT 1', [seededName(label, signals)]);
  if (!org) return null;
  const [product]: Array<{ id: string }> = await ds.query('SELECT id FROM products WHERE organization_id = $1', [org.id]);
  const teammates: Array<{ id: string }> = await ds.query('SELECT id FROM teammates WHERE organization_id = $1 ORDER BY created_at, email', [org.id]);
  const endpoints: Array<{ id: string }> = await ds.query('SELECT id FROM webhook_endpoints WHERE organization_id = $1 ORDER BY created_at, url', [org.id]);
  return {
    label, size: scaled(signals), organizationId: org.id, productId: product.id,
    teammateIds: teammates.map((t) => t.id), endpointIds: endpoints.map((e) => e.id), tag: tagOf(label, signals),
  };
}

/** Ids of one workspace's rows carry its tag; the same label and size always give the same tag. */
const tagOf = (label: string, signals: number) => `${label[0]}${signals.toString(36).padStart(5, '0')}`;

/** Creates the workspace's organization, product, teammates and endpoints, then fills it (bench/scale-seed.ts). */
export async function seedScaleWorkspace(ds: DataSource, label: ScaleWorkspace['label'], signals: number, log: SeedLog): Promise<ScaleWorkspace> {
  const org = await createOrganization(ds, { name: `Scale bench ${label}: seeding`, sponsored: true });
  const product = await createProduct(ds, { organizationId: org.id, name: `Scale bench ${label}` });
  const teammateIds: string[] = [];
  for (let k = 0; k < TEAMMATES; k++) {
    const teammate = await createTeammate(ds, { organizationId: org.id, email: `teammate-${String(k).padStart(2, '0')}@bench.example.com`, role: k === 0 ? 'owner' : 'member' });
    teammateIds.push(teammate.id);
  }
  const endpointIds: string[] = [];
  for (let k = 0; k < ENDPOINTS; k++) {
    const { endpoint } = await createEndpoint(ds, org.id, { url: `https://receiver-${k}.bench.example.com/in`, subscriptions: ['signal.created'] });
    endpointIds.push(endpoint.id);
  }
  const workspace: ScaleWorkspace = {
    label, size: scaled(signals), organizationId: org.id, productId: product.id, teammateIds, endpointIds, tag: tagOf(label, signals),
  };
  await seedWorkspace(ds, { ...workspace, seededName: seededName(label, signals) }, workspace.size, log);
  return workspace;
}

/** The large and the small workspace, seeding whichever is missing. */
export async function scaleWorkspaces(ds: DataSource, log: (line: string) => void): Promise<ScaleWorkspace[]> {
  const out: ScaleWorkspace[] = [];
  for (const [label, signals] of [['large', LARGE_SIGNALS], ['small', Math.round(LARGE_SIGNALS / 1000)]] as const) {
    const found = await findWorkspace(ds, label, signals);
    if (found) {
      log(`${label}: already seeded (${signals} signals), reused`);
      out.push(found);
      continue;
    }
    const start = performance.now();
    log(`${label}: seeding ${signals} signals and the rest in proportion`);
    out.push(await seedScaleWorkspace(ds, label, signals, (table, rows, ms) => {
      log(`  ${table.padEnd(22)} ${String(rows).padStart(9)} rows  ${(ms / 1000).toFixed(1).padStart(6)} s  ${Math.round(rows / (ms / 1000)).toLocaleString('en-US').padStart(9)} rows/s`);
    }));
    log(`${label}: seeded in ${((performance.now() - start) / 1000).toFixed(1)} s (with VACUUM ANALYZE)`);
  }
  return out;
}
