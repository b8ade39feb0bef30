import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/** A value event strong enough to be a moment worth asking about. */
@Entity('proof_moments')
export class ProofMoment {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'organization_id', type: 'text' })
  organizationId!: string;

  @Column({ name: 'product_id', type: 'text' })
  productId!: string;

  @Column({ name: 'value_event_id', type: 'text' })
  valueEventId!: string;

  @Column({ type: 'text' })
  type!: string;

  @Column({ type: 'integer' })
  strength!: number;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
