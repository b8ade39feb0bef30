import { DataSource, EntityManager } from 'typeorm';
import { Signal } from '../entities';
import { recordMentionIn } from '../integrations/brand-mentions';
import { recordSource } from '../integrations/sources';
import { SYSTEM_ACTOR } from '../proof/proof-ledger';
import { recomputeFeaturesOfSignal } from './features';
import { monthPeriod } from './signals';

export const SENTIMENTS = ['positive', 'mixed', 'neutral', 'negative'] as const;
export const URGENCIES = ['low', 'medium', 'high', 'critical'] as const;

export interface AnalysisJob {
  signalId: string;
  category: string;
  title: string;
  body: string;
  features: Array<{ id: string; title: string; problem: string }>;
}

export interface AnalysisResult {
  sentiment: (typeof SENTIMENTS)[number];
  urgency: (typeof URGENCIES)[number];
  /** Null when the model's summary stated what the signal does not (docs/customer-loop.md#signal-analysis). */
  summary: string | null;
  candidateFeatureIds: string[];
}

export interface ClaimedSignal {
  id: string;
  organizationId: string;
  productId: string;
}

// The features a model may propose links to; open ones only, best-scored first.
const CANDIDATE_FEATURES = 50;

// Long enough for a batch of Temporal starts; a worker that dies holding a claim loses it after this.
const CLAIM_LEASE = '1 minute';
const RETRY_AFTER = '5 seconds';

/**
 * Claims signals whose analysis may start, in a short transaction that commits a lease, then hands
 * each to `start` outside it: no row lock is held while Temporal is called, and a failed start delays
 * only its own signal. Each claim takes one unit of the workspace's monthly analysis allowance, once
 * per signal and month (a retried claim is not counted again); a signal past it waits (its state says
 * so) and is claimed again once the allowance returns (a new month, or a raised allowance).
 */
export async function claimSignalsForAnalysis(
  ds: DataSource, batchSize: number, defaultAllowance: number, start: (signal: ClaimedSignal) => Promise<void>, now = new Date(),
): Promise<number> {
  const period = `analysis:${monthPeriod(now)}`;
  const { claimed, seen } = await ds.transaction(async (em) => {
    const rows: Array<{ id: string; organization_id: string; product_id: string; analysis_state: string; allowance: number;
      counted: string | null; }> = await em.query(
      `SELECT s.id, s.organization_id, s.product_id, s.analysis_state, s.analysis_counted_period AS counted,
              COALESCE(l.monthly_signal_allowance, $3) AS allowance
         FROM signals s LEFT JOIN intake_limits l ON l.organization_id = s.organization_id
        WHERE s.analysis_queued_at IS NULL
          AND (s.analysis_claimed_until IS NULL OR s.analysis_claimed_until <= now())
          AND (s.analysis_state = 'pending'
               OR (s.analysis_state = 'waiting' AND NOT EXISTS (
                     SELECT 1 FROM intake_counters c
                      WHERE c.organization_id = s.organization_id AND c.period = $2
                        AND c.count >= COALESCE(l.monthly_signal_allowance, $3))))
        ORDER BY s.created_at, s.id
        LIMIT $1
        FOR UPDATE OF s SKIP LOCKED`,
      [batchSize, period, defaultAllowance],
    );
    const ready: ClaimedSignal[] = [];
    for (const row of rows) {
      const granted: unknown[] = row.counted === period ? [row] : await em.query(
        `INSERT INTO intake_counters AS c (organization_id, period, count) SELECT $1, $2, 1 WHERE $3 > 0
         ON CONFLICT (organization_id, period) DO UPDATE SET count = c.count + 1 WHERE c.count < $3
         RETURNING count`,
        [row.organization_id, period, row.allowance],
      );
      if (granted.length === 0) {
        // Past the allowance after all (intake's month units let it in while an earlier signal that
        // intake flagged early took the unit here): it says so, so no more signals read as within
        // the allowance than it allows.
        await em.query(`UPDATE signals SET analysis_state = 'waiting', over_allowance = true, updated_at = now() WHERE id = $1`, [row.id]);
        continue;
      }
      await em.query(
        `UPDATE signals SET analysis_claimed_until = now() + interval '${CLAIM_LEASE}', analysis_counted_period = $2,
                analysis_state = 'pending', over_allowance = false, updated_at = now()
          WHERE id = $1`,
        [row.id, period],
      );
      ready.push({ id: row.id, organizationId: row.organization_id, productId: row.product_id });
    }
    return { claimed: ready, seen: rows.length };
  });
  const results = await Promise.allSettled(claimed.map(async (signal) => {
    await start(signal);
    return signal.id;
  }));
  const started = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  if (started.length > 0) {
    await ds.query(`UPDATE signals SET analysis_queued_at = now(), analysis_claimed_until = NULL WHERE id = ANY($1)`, [started]);
  }
  const failed = claimed.filter((s) => !started.includes(s.id)).map((s) => s.id);
  if (failed.length > 0) {
    await ds.query(`UPDATE signals SET analysis_claimed_until = now() + interval '${RETRY_AFTER}' WHERE id = ANY($1)`, [failed]);
    const first = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    throw new Error(`${failed.length} analysis start(s) failed, retried shortly: ${(first?.reason as Error)?.message}`);
  }
  return seen;
}

/** Moves the signal to analyzing and gathers what the model needs; null when there is nothing to do. */
export async function beginSignalAnalysis(ds: DataSource, signalId: string): Promise<AnalysisJob | null> {
  const signal = await ds.getRepository(Signal).findOneBy({ id: signalId });
  if (!signal || signal.analysisState === 'done') return null;
  await ds.query(`UPDATE signals SET analysis_state = 'analyzing', analysis_error = NULL, updated_at = now() WHERE id = $1`, [signalId]);
  const features: Array<{ id: string; title: string; problem: string }> = await ds.query(
    `SELECT id, title, problem FROM features WHERE product_id = $1 AND state NOT IN ('released', 'declined')
      ORDER BY score DESC, id LIMIT $2`,
    [signal.productId, CANDIDATE_FEATURES],
  );
  return { signalId, category: signal.category, title: signal.title, body: signal.body, features };
}

/** Stores a validated result and re-scores the features the signal is already evidence for. */
export async function completeSignalAnalysis(ds: DataSource, signalId: string, result: AnalysisResult): Promise<void> {
  await ds.transaction(async (em) => {
    await em.query(
      `UPDATE signals SET analysis_state = 'done', sentiment = $2, urgency = $3, summary = $4, candidate_feature_ids = $5,
              analysis_error = NULL, updated_at = now()
        WHERE id = $1`,
      [signalId, result.sentiment, result.urgency, result.summary, result.candidateFeatureIds],
    );
    await recomputeFeaturesOfSignal(em, signalId);
    await recordSignalSources(em, signalId);
  });
}

/** An analysed signal becomes a source record; a review also becomes a brand mention (Integrations). */
async function recordSignalSources(em: EntityManager, signalId: string): Promise<void> {
  const signal = await em.getRepository(Signal).findOneByOrFail({ id: signalId });
  await recordSource(em, {
    organizationId: signal.organizationId, productId: signal.productId, system: 'signal', externalId: signal.id, kind: 'signal',
    capturedAt: signal.createdAt, capturedText: signal.body, title: signal.title, links: { signalId: signal.id },
    reuse: 'internal_only', reasons: ['no_consent'], actor: SYSTEM_ACTOR, ref: signal.id,
  });
  if (signal.category === 'review') {
    await recordMentionIn(em, signal.organizationId, {
      productId: signal.productId, platform: 'other', url: `urn:sv:signal:${signal.id}`, text: signal.body, signalId: signal.id,
    }, SYSTEM_ACTOR);
  }
}

/** Records the failure; sentiment, summary and urgency stay as they were: nothing is made up. */
export async function failSignalAnalysis(ds: DataSource, signalId: string, reason: string): Promise<void> {
  await ds.query(
    `UPDATE signals SET analysis_state = 'failed', analysis_error = $2, updated_at = now() WHERE id = $1 AND analysis_state <> 'done'`,
    [signalId, reason.slice(0, 500)],
  );
}
