import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';
import type { EligibilityPolicy } from '../rules/proof-eligibility';

export const PLACEMENT_STATES = ['draft', 'active', 'paused', 'archived'] as const;
export type PlacementState = (typeof PLACEMENT_STATES)[number];
export const HOST_CONTEXTS = ['service_native', 'static_export', 'third_party'] as const;

/** Where proof is shown. Only an active placement renders, and every render re-evaluates eligibility. */
@Entity('proof_placements')
export class ProofPlacement {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'organization_id', type: 'text' })
  organizationId!: string;

  @Column({ name: 'product_id', type: 'text' })
  productId!: string;

  @Column({ type: 'text' })
  name!: string;

  @Column({ name: 'placement_type', type: 'text' })
  placementType!: string;

  @Column({ type: 'text' })
  channel!: string;

  @Column({ name: 'host_context', type: 'text' })
  hostContext!: string;

  @Column({ type: 'text', nullable: true })
  locale!: string | null;

  @Column({ type: 'text', nullable: true })
  geography!: string | null;

  @Column({ type: 'text' })
  state!: PlacementState;

  @Column({ name: 'render_cache_version', type: 'integer' })
  renderCacheVersion!: number;

  @Column({ name: 'render_config', type: 'jsonb' })
  renderConfig!: object;

  @Column({ name: 'eligibility_policy', type: 'jsonb' })
  eligibilityPolicy!: EligibilityPolicy;

  @Column({ name: 'published_at', type: 'timestamptz', nullable: true })
  publishedAt!: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}
