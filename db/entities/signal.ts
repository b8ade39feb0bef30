import { Column, Entity, PrimaryColumn } from 'typeorm';

export const SIGNAL_CATEGORIES = ['support', 'bug', 'feature', 'ux', 'review'] as const;
export type SignalCategory = (typeof SIGNAL_CATEGORIES)[number];
export type AnalysisState = 'pending' | 'analyzing' | 'done' | 'failed' | 'waiting' | 'skipped';
export const ANALYSIS_STATES: AnalysisState[] = ['pending', 'analyzing', 'done', 'failed', 'waiting', 'skipped'];

/** A feedback item captured for an end user; unique per product by the integrator's idempotencyKey. */
@Entity('signals')
export class Signal {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'organization_id', type: 'text' })
  organizationId!: string;

  @Column({ name: 'product_id', type: 'text' })
  productId!: string;

  @Column({ name: 'thread_id', type: 'text' })
  threadId!: string;

  @Column({ name: 'end_user_id', type: 'text' })
  endUserId!: string;

  @Column({ type: 'text' })
  category!: SignalCategory;

  @Column({ type: 'text' })
  title!: string;

  @Column({ type: 'text' })
  body!: string;

  @Column({ type: 'jsonb', nullable: true })
  context!: Record<string, unknown> | null;

  @Column({ name: 'idempotency_key', type: 'text' })
  idempotencyKey!: string;

  @Column({ type: 'text' })
  urgency!: string;

  @Column({ type: 'text', nullable: true })
  sentiment!: string | null;

  @Column({ type: 'text', nullable: true })
  summary!: string | null;

  @Column({ name: 'candidate_feature_ids', type: 'text', array: true })
  candidateFeatureIds!: string[];

  @Column({ name: 'analysis_state', type: 'text' })
  analysisState!: AnalysisState;

  @Column({ name: 'analysis_error', type: 'text', nullable: true })
  analysisError!: string | null;

  @Column({ name: 'analysis_queued_at', type: 'timestamptz', nullable: true })
  analysisQueuedAt!: Date | null;

  @Column({ name: 'over_allowance', type: 'boolean' })
  overAllowance!: boolean;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}
