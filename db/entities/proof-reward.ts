import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/** A participation reward; never conditioned on rating or sentiment. */
@Entity('proof_rewards')
export class ProofReward {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'organization_id', type: 'text' })
  organizationId!: string;

  @Column({ name: 'product_id', type: 'text' })
  productId!: string;

  @Column({ name: 'proof_item_id', type: 'text', nullable: true })
  proofItemId!: string | null;

  @Column({ name: 'person_ref', type: 'text', nullable: true })
  personRef!: string | null;

  @Column({ name: 'end_user_id', type: 'text', nullable: true })
  endUserId!: string | null;

  @Column({ type: 'text' })
  kind!: string;

  @Column({ type: 'text' })
  description!: string;

  @Column({ name: 'unlock_key', type: 'text', nullable: true })
  unlockKey!: string | null;

  @Column({ type: 'text' })
  state!: string;

  @Column({ name: 'approved_at', type: 'timestamptz', nullable: true })
  approvedAt!: Date | null;

  @Column({ name: 'approved_by', type: 'text', nullable: true })
  approvedBy!: string | null;

  @Column({ name: 'fulfilled_at', type: 'timestamptz', nullable: true })
  fulfilledAt!: Date | null;

  @Column({ name: 'cancelled_at', type: 'timestamptz', nullable: true })
  cancelledAt!: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
