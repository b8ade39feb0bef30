import { randomBytes } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { createDataSource } from '../db/data-source';
import { createServiceKey } from '../db/platform/service-keys';
import { createSession } from '../db/platform/sessions';
import { createOrganization, createProduct, createTeammate } from '../db/platform/tenancy';
import { installTemporalLogger } from '../runtime/temporal-logging';
import { submissionBody } from '../test/support/proof-fixtures';
import { Cleanup, startScratchDatabase, startScratchTemporal } from '../test/support/servers';
import { RunningService, startService } from './service';

export interface ProofBench {
  ds: DataSource;
  service: RunningService;
  organizationId: string;
  productId: string;
  /** A key with proof read, write, publish, export and submissions scopes. */
  secret: string;
  /** Calls the API with the key, or as the workspace owner, and answers `data`; anything but 2xx throws. */
  api: (method: 'POST' | 'GET', url: string, payload?: object, asOwner?: boolean) => Promise<any>;
}

/**
 * The service as `npm start` runs it (bench/service.ts) on a scratch PostgreSQL database and Temporal, with one
 * workspace, a key and an owner's session. Every request of a benchmark comes from one address, so the rate
 * limits are lifted: the benchmark would measure them.
 */
export async function startProofBench(cleanup: Cleanup, env: Record<string, string> = {}): Promise<ProofBench> {
  installTemporalLogger('ERROR');
  const [databaseUrl, temporal] = await Promise.all([startScratchDatabase(cleanup, 'sv_bench'), startScratchTemporal(cleanup)]);
  // A named database needs a key ring shared by every role and this process (runtime/secret-box.ts).
  process.env.SV_SECRET_KEYS ??= `bench:${randomBytes(32).toString('base64')}`;
  const service = await startService(cleanup, {
    DATABASE_URL: databaseUrl, SV_SECRET_KEYS: process.env.SV_SECRET_KEYS, TEMPORAL_ADDRESS: temporal.address, SV_TASK_QUEUE: `bench-${randomBytes(4).toString('hex')}`,
    RATE_LIMIT_PER_MINUTE: '1000000', PUBLIC_RATE_LIMIT_PER_MINUTE: '1000000', ...env,
  });
  // `npm start` migrated the database; this connection only seeds and reads.
  const ds = createDataSource(databaseUrl, 4);
  await ds.initialize();
  cleanup.push(() => ds.destroy());
  const org = await createOrganization(ds, { name: 'Bench', sponsored: true });
  const product = await createProduct(ds, { organizationId: org.id, name: 'Bench' });
  const { secret } = await createServiceKey(ds, {
    organizationId: org.id, productId: product.id, environment: 'production',
    scopes: ['service:proof:read', 'service:proof:write', 'service:proof:publish', 'service:proof:export', 'service:proof:submissions:write'],
  });
  const owner = await createTeammate(ds, { organizationId: org.id, email: 'bench@example.com', role: 'owner' });
  const session = await createSession(ds, owner.id, 2);
  const api = async (method: 'POST' | 'GET', url: string, payload?: object, asOwner = false) => {
    const headers: Record<string, string> = asOwner ? { cookie: session.cookie, 'x-csrf-token': session.csrfToken }
      : { authorization: `Bearer ${secret}`, 'idempotency-key': `bench-${randomBytes(8).toString('hex')}` };
    const res = await fetch(`${service.base}${url}`, {
      method, ...(payload ? { body: JSON.stringify(payload), headers: { ...headers, 'content-type': 'application/json' } } : { headers }),
    });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${url}: ${res.status} ${text.slice(0, 500)}`);
    return JSON.parse(text).data;
  };
  return { ds, service, organizationId: org.id, productId: product.id, secret, api };
}

export interface Story {
  proofItemId: string;
  versionId: string;
}

/** One story through the API as a customer and a person make it: submitted, sent for approval, approved by the owner. */
export async function approvedStory(bench: ProofBench): Promise<Story> {
  const s = await bench.api('POST', '/api/v1/proof/submissions', submissionBody());
  await bench.api('POST', `/api/v1/proof/items/${s.proofItemId}/request-approval`, { versionId: s.originalVersionId });
  await bench.api('POST', `/api/workspace/proof/items/${s.proofItemId}/approve`, { versionId: s.originalVersionId }, true);
  return { proofItemId: s.proofItemId, versionId: s.originalVersionId };
}

/**
 * `count` copies of an approved story, set-wise (one `INSERT … SELECT generate_series` a table, as
 * bench/scale-seed.ts seeds): the item, its approved original, its consent grant and the grant's receipt, each
 * row the template's with new ids (`<prefix>pit_<n>`, …) and later creation times, so the copies come after the
 * template in every order. The content and its hash are the template's; the receipts keep the template's
 * signature (nothing on the render or export path verifies it). The rows' triggers (the render version's bump,
 * foreign keys) are off for the copy (`session_replication_role`: one bump of one row a row would take minutes
 * for 100,000 rows in one transaction); the organization's render version is bumped once at the end instead.
 */
export async function cloneStory(ds: DataSource, template: Story, count: number, prefix: string): Promise<string[]> {
  await ds.transaction(async (em) => {
    await em.query(`SET LOCAL session_replication_role = replica`);
    await em.query(`INSERT INTO proof_items (id, organization_id, product_id, submission_id, type, status, status_reason, customer_person_id,
        customer_email, customer_name, original_version_id, approved_public_version_id, over_limit, over_limit_reasons, incentive,
        verification_state, render_hold, created_by_key_id, created_at, updated_at)
      SELECT '${prefix}pit_' || n, t.organization_id, t.product_id, '${prefix}sub_' || n, t.type, t.status, t.status_reason, t.customer_person_id,
        t.customer_email, t.customer_name, '${prefix}pv_' || n, '${prefix}pv_' || n, t.over_limit, t.over_limit_reasons, t.incentive,
        t.verification_state, t.render_hold, t.created_by_key_id, t.created_at + make_interval(secs => n / 1000.0), t.updated_at
      FROM proof_items t, generate_series(1, $2::int) n WHERE t.id = $1`, [template.proofItemId, count]);
    await em.query(`INSERT INTO proof_versions (id, proof_item_id, version_number, is_original, content, content_hash, created_by_type,
        created_by_id, model_id, change_reason, parent_version_id, locale, semantic_diff, approval_state, created_at)
      SELECT '${prefix}pv_' || n, '${prefix}pit_' || n, v.version_number, v.is_original, v.content, v.content_hash, v.created_by_type,
        v.created_by_id, v.model_id, v.change_reason, NULL, v.locale, v.semantic_diff, v.approval_state, v.created_at + make_interval(secs => n / 1000.0)
      FROM proof_versions v, generate_series(1, $2::int) n WHERE v.id = $1`, [template.versionId, count]);
    await em.query(`INSERT INTO consent_grants (id, proof_item_id, approved_version_id, state, display_mode, identity_fields, channels, products,
        media, paid_use_allowed, translation_allowed, geography, valid_until, customer_approved_wording, receipt_hash, evidence, revoked_at,
        created_at, consent_template_version_id, wording_hash)
      SELECT '${prefix}cg_' || n, '${prefix}pit_' || n, '${prefix}pv_' || n, g.state, g.display_mode, g.identity_fields, g.channels, g.products,
        g.media, g.paid_use_allowed, g.translation_allowed, g.geography, g.valid_until, g.customer_approved_wording, g.receipt_hash, g.evidence,
        g.revoked_at, g.created_at + make_interval(secs => n / 1000.0), g.consent_template_version_id, g.wording_hash
      FROM consent_grants g, generate_series(1, $2::int) n WHERE g.proof_item_id = $1`, [template.proofItemId, count]);
    await em.query(`INSERT INTO proof_receipts (id, consent_grant_id, proof_item_id, key_id, payload, signature, created_at)
      SELECT '${prefix}rcp_' || n, '${prefix}cg_' || n, '${prefix}pit_' || n, r.key_id, r.payload, r.signature, r.created_at + make_interval(secs => n / 1000.0)
      FROM proof_receipts r, generate_series(1, $2::int) n WHERE r.proof_item_id = $1`, [template.proofItemId, count]);
    await em.query(`UPDATE proof_render_versions SET version = version + 1
      WHERE organization_id = (SELECT organization_id FROM proof_items WHERE id = $1)`, [template.proofItemId]);
  });
  for (const table of ['proof_items', 'proof_versions', 'consent_grants', 'proof_receipts']) await ds.query(`ANALYZE ${table}`);
  return Array.from({ length: count }, (_, i) => `${prefix}pit_${i + 1}`);
}
