import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { ScoreBreakdown } from '../rules/feature-score';

export const FEATURE_STATES = ['discovery', 'planned', 'building', 'released', 'declined'] as const;
export type FeatureState = (typeof FEATURE_STATES)[number];

/** A candidate feature; score and counts are recomputed from evidence and votes on every change. */
@Entity('features')
export class Feature {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'organization_id', type: 'text' })
  organizationId!: string;

  @Column({ name: 'product_id', type: 'text' })
  productId!: string;

  @Column({ type: 'text' })
  title!: string;

  @Column({ type: 'text' })
  problem!: string;

  @Column({ type: 'text' })
  state!: FeatureState;

  @Column({ name: 'public_board', type: 'boolean' })
  publicBoard!: boolean;

  @Column({ type: 'double precision' })
  score!: number;

  @Column({ name: 'score_breakdown', type: 'jsonb' })
  scoreBreakdown!: ScoreBreakdown;

  @Column({ name: 'vote_count', type: 'integer' })
  voteCount!: number;

  @Column({ name: 'follower_count', type: 'integer' })
  followerCount!: number;

  @Column({ name: 'signal_count', type: 'integer' })
  signalCount!: number;

  /** The surviving feature after a merge; null otherwise. */
  @Column({ name: 'merged_into', type: 'text', nullable: true })
  mergedInto!: string | null;

  @Column({ name: 'merged_at', type: 'timestamptz', nullable: true })
  mergedAt!: Date | null;

  @Column({ name: 'merged_by', type: 'text', nullable: true })
  mergedBy!: string | null;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}
