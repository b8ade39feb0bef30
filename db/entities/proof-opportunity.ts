import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/** An ask candidate: a person decides whether a request is made from it. */
@Entity('proof_opportunities')
export class ProofOpportunity {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'organization_id', type: 'text' })
  organizationId!: string;

  @Column({ name: 'product_id', type: 'text' })
  productId!: string;

  @Column({ type: 'text' })
  trigger!: string;

  @Column({ name: 'person_ref', type: 'text', nullable: true })
  personRef!: string | null;

  @Column({ name: 'end_user_id', type: 'text', nullable: true })
  endUserId!: string | null;

  @Column({ name: 'person_key', type: 'text' })
  personKey!: string;

  @Column({ name: 'moment_id', type: 'text' })
  momentId!: string;

  @Column({ name: 'value_event_id', type: 'text' })
  valueEventId!: string;

  @Column({ type: 'integer' })
  strength!: number;

  @Column({ type: 'text' })
  state!: string;

  @Column({ name: 'request_id', type: 'text', nullable: true })
  requestId!: string | null;

  @Column({ name: 'decided_by', type: 'text', nullable: true })
  decidedBy!: string | null;

  @Column({ name: 'decided_at', type: 'timestamptz', nullable: true })
  decidedAt!: Date | null;

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt!: Date;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
