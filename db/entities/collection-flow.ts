import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';
import type { FlowDefinition, Incentive } from '../rules/collection-flow';

export const FLOW_STATES = ['draft', 'live', 'paused', 'archived'] as const;
export type FlowState = (typeof FLOW_STATES)[number];

/**
 * A collection flow: a draft definition teammates edit (with a revision for stale-write checks) and
 * the id of its latest published version, which the live link serves.
 */
@Entity('collection_flows')
export class CollectionFlow {
  @PrimaryColumn({ type: 'text' }) id!: string;
  @Column({ name: 'public_id', type: 'text' }) publicId!: string;
  @Column({ name: 'organization_id', type: 'text' }) organizationId!: string;
  @Column({ name: 'product_id', type: 'text' }) productId!: string;
  @Column({ type: 'text' }) name!: string;
  @Column({ type: 'text' }) state!: FlowState;
  @Column({ name: 'draft_definition', type: 'jsonb' }) draftDefinition!: FlowDefinition;
  @Column({ name: 'draft_revision', type: 'integer' }) draftRevision!: number;
  @Column({ name: 'live_version_id', type: 'text', nullable: true }) liveVersionId!: string | null;
  /** Set by PUT …/incentive; copied into the next published version. */
  @Column({ type: 'jsonb' }) incentive!: Incentive;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt!: Date;
  @Column({ name: 'updated_at', type: 'timestamptz' }) updatedAt!: Date;
}
