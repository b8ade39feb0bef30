import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/**
 * An event written in the same transaction as the change it announces. The relay in the worker role
 * claims rows with FOR UPDATE SKIP LOCKED and hands them to Temporal, so a rolled-back change is never
 * announced and intake never waits on Temporal.
 */
@Entity('outbox_events')
export class OutboxEvent {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'organization_id', type: 'text' })
  organizationId!: string;

  @Column({ name: 'product_id', type: 'text', nullable: true })
  productId!: string | null;

  @Column({ name: 'event_type', type: 'text' })
  eventType!: string;

  @Column({ type: 'jsonb' })
  payload!: Record<string, unknown>;

  @Column({ name: 'available_at', type: 'timestamptz' })
  availableAt!: Date;

  @Column({ name: 'processed_at', type: 'timestamptz', nullable: true })
  processedAt!: Date | null;

  @Column({ type: 'integer', default: 0 })
  attempts!: number;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
