import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/** An item placed on a placement; removing keeps the row (state removed) as history. */
@Entity('proof_placement_items')
export class ProofPlacementItem {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'placement_id', type: 'text' })
  placementId!: string;

  @Column({ name: 'proof_item_id', type: 'text' })
  proofItemId!: string;

  @Column({ name: 'version_id', type: 'text', nullable: true })
  versionId!: string | null;

  @Column({ type: 'integer' })
  position!: number;

  @Column({ type: 'text' })
  state!: 'active' | 'removed';

  @Column({ name: 'removed_reason', type: 'text', nullable: true })
  removedReason!: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column({ name: 'removed_at', type: 'timestamptz', nullable: true })
  removedAt!: Date | null;
}
