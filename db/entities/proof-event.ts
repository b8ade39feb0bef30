import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/** One row of the proof ledger. Append-only: a database trigger refuses UPDATE, DELETE and TRUNCATE. */
@Entity('proof_events')
export class ProofEvent {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'organization_id', type: 'text' })
  organizationId!: string;

  @Column({ name: 'product_id', type: 'text', nullable: true })
  productId!: string | null;

  @Column({ name: 'event_type', type: 'text' })
  eventType!: string;

  @Column({ name: 'proof_item_id', type: 'text', nullable: true })
  proofItemId!: string | null;

  @Column({ name: 'placement_id', type: 'text', nullable: true })
  placementId!: string | null;

  @Column({ name: 'asset_id', type: 'text', nullable: true })
  assetId!: string | null;

  @Column({ name: 'actor_type', type: 'text' })
  actorType!: string;

  @Column({ name: 'actor_id', type: 'text', nullable: true })
  actorId!: string | null;

  @Column({ type: 'jsonb' })
  properties!: Record<string, unknown>;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
