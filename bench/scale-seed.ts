import type { DataSource } from 'typeorm';

/** How much one workspace holds; the shares make the filtered reads selective, as they are in a real workspace. */
export interface SeedSize {
  signals: number;
  features: number;
  stories: number;
  ledgerEvents: number;
  deliveries: number;
  inboxItems: number;
}

export const scaled = (n: number): SeedSize => ({
  signals: n, features: Math.max(10, n / 100), stories: n / 10, ledgerEvents: n, deliveries: n, inboxItems: n / 10,
});

export interface SeedTarget {
  organizationId: string;
  productId: string;
  /** A teammate who owns most threads (threads by owner, and unassigned the rest). */
  ownerId: string;
  endpointId: string;
  /** A prefix that keeps ids of several seeded workspaces apart. */
  prefix: string;
}

/**
 * Fills one workspace set-wise (`INSERT … SELECT generate_series`, one statement a table): minutes for millions of
 * rows, not hours. Categories, states and statuses are skewed as feedback and stories are: most signals are bugs,
 * most threads closed, most stories approved, so a filter on the rare value must not read the common ones.
 */
export async function seedWorkspace(ds: DataSource, t: SeedTarget, size: SeedSize): Promise<void> {
  const p = t.prefix;
  const base = [t.organizationId, t.productId];
  await ds.query(`INSERT INTO threads (id, organization_id, product_id, end_user_id, subject, state, owner_id, created_at, updated_at)
    SELECT '${p}thr_' || i, $1, $2, 'user-' || (i % 5000), 'Seeded thread ' || i,
      CASE WHEN i % 50 = 0 THEN 'open' WHEN i % 50 = 1 THEN 'pending' WHEN i % 3 = 0 THEN 'resolved' ELSE 'closed' END,
      CASE WHEN i % 50 = 2 THEN NULL ELSE $3 END,
      now() - make_interval(secs => $4::int - i), now()
    FROM generate_series(1, $4::int) i`, [...base, t.ownerId, size.signals]);
  await ds.query(`INSERT INTO signals (id, organization_id, product_id, thread_id, end_user_id, category, title, body,
      idempotency_key, analysis_state, created_at, updated_at)
    SELECT '${p}sig_' || i, $1, $2, '${p}thr_' || i, 'user-' || (i % 5000),
      CASE WHEN i % 100 = 0 THEN 'review' WHEN i % 100 < 5 THEN 'ux' WHEN i % 100 < 20 THEN 'support' WHEN i % 100 < 50 THEN 'feature' ELSE 'bug' END,
      'Seeded signal ' || i, 'Exports are slow when the report has many rows (' || i || ')', 'seed-' || i, 'skipped',
      now() - make_interval(secs => $3::int - i), now()
    FROM generate_series(1, $3::int) i`, [...base, size.signals]);
  await ds.query(`INSERT INTO features (id, organization_id, product_id, title, problem, state, public_board, score, created_at, updated_at)
    SELECT '${p}fea_' || i, $1, $2, 'Seeded feature ' || i, 'A problem ' || i,
      CASE WHEN i % 20 = 0 THEN 'planned' WHEN i % 20 = 1 THEN 'building' WHEN i % 20 = 2 THEN 'released' ELSE 'discovery' END,
      i % 4 = 0, (i * 7919 % 1000) / 10.0, now() - make_interval(secs => $3::int - i), now()
    FROM generate_series(1, $3::int) i`, [...base, size.features]);
  await ds.query(`INSERT INTO proof_items (id, organization_id, product_id, submission_id, type, status, incentive, verification_state, created_at, updated_at)
    SELECT '${p}pit_' || i, $1, $2, '${p}sub_' || i, 'text',
      CASE WHEN i % 50 = 0 THEN 'in_review' WHEN i % 50 = 1 THEN 'submitted' WHEN i % 50 = 2 THEN 'rejected' WHEN i % 50 = 3 THEN 'revoked' ELSE 'approved' END,
      '{"offered": false}', 'unverified', now() - make_interval(secs => $3::int - i), now()
    FROM generate_series(1, $3::int) i`, [...base, size.stories]);
  await ds.query(`INSERT INTO proof_events (id, organization_id, product_id, event_type, proof_item_id, actor_type, properties, created_at)
    SELECT '${p}pev_' || i, $1, $2,
      CASE WHEN i % 100 = 0 THEN 'proof.item.revoked' WHEN i % 2 = 0 THEN 'proof.item.approved' ELSE 'proof.item.submitted' END,
      '${p}pit_' || (1 + i % $4::int), 'system', '{}', now() - make_interval(secs => $3::int - i)
    FROM generate_series(1, $3::int) i`, [...base, size.ledgerEvents, size.stories]);
  await ds.query(`INSERT INTO webhook_deliveries (id, organization_id, endpoint_id, product_id, event_id, event_type, payload, status,
      attempt_count, workflow_started, created_at)
    SELECT '${p}dlv_' || i, $1, $3, $2, '${p}evt_' || i, CASE WHEN i % 2 = 0 THEN 'signal.created' ELSE 'thread.updated' END, '{}',
      CASE WHEN i % 100 = 0 THEN 'failed' ELSE 'delivered' END, 1, true, now() - make_interval(secs => $4::int - i)
    FROM generate_series(1, $4::int) i`, [...base, t.endpointId, size.deliveries]);
  await ds.query(`INSERT INTO inbox_items (id, organization_id, product_id, end_user_id, subject, preview, created_at)
    SELECT '${p}inb_' || i, $1, $2, 'user-' || (i % 500), 'Seeded update ' || i, 'An update', now() - make_interval(secs => $3::int - i)
    FROM generate_series(1, $3::int) i`, [...base, size.inboxItems]);
  for (const table of ['threads', 'signals', 'features', 'proof_items', 'proof_events', 'webhook_deliveries', 'inbox_items']) {
    await ds.query(`ANALYZE ${table}`);
  }
}
