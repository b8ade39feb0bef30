import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { FlowDefinition, Incentive } from '../rules/collection-flow';

/** One immutable published version of a flow; drafts and personal requests pin one. */
@Entity('collection_flow_versions')
export class CollectionFlowVersion {
  @PrimaryColumn({ type: 'text' }) id!: string;
  @Column({ name: 'flow_id', type: 'text' }) flowId!: string;
  @Column({ name: 'organization_id', type: 'text' }) organizationId!: string;
  @Column({ name: 'product_id', type: 'text' }) productId!: string;
  @Column({ name: 'version_number', type: 'integer' }) versionNumber!: number;
  @Column({ type: 'jsonb' }) definition!: FlowDefinition;
  @Column({ type: 'jsonb' }) incentive!: Incentive;
  @Column({ name: 'content_hash', type: 'text' }) contentHash!: string;
  @Column({ name: 'published_by', type: 'text', nullable: true }) publishedBy!: string | null;
  @Column({ name: 'published_at', type: 'timestamptz' }) publishedAt!: Date;
}
