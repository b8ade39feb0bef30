import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/** A verified value event, stored once per (product, eventId). */
@Entity('proof_value_events')
export class ProofValueEvent {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'organization_id', type: 'text' })
  organizationId!: string;

  @Column({ name: 'product_id', type: 'text' })
  productId!: string;

  @Column({ name: 'event_id', type: 'text' })
  eventId!: string;

  @Column({ type: 'text' })
  type!: string;

  @Column({ name: 'occurred_at', type: 'timestamptz' })
  occurredAt!: Date;

  @Column({ name: 'person_ref', type: 'text', nullable: true })
  personRef!: string | null;

  @Column({ name: 'end_user_id', type: 'text', nullable: true })
  endUserId!: string | null;

  @Column({ name: 'person_key', type: 'text' })
  personKey!: string;

  @Column({ type: 'jsonb' })
  properties!: unknown;

  @Column({ name: 'origin_type', type: 'text' })
  originType!: string;

  @Column({ name: 'origin_id', type: 'text', nullable: true })
  originId!: string | null;

  @Column({ type: 'integer' })
  strength!: number;

  @Column({ name: 'moment_id', type: 'text', nullable: true })
  momentId!: string | null;

  @Column({ name: 'opportunity_id', type: 'text', nullable: true })
  opportunityId!: string | null;

  @Column({ name: 'suppressed_reason', type: 'text', nullable: true })
  suppressedReason!: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
