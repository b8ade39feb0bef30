import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

/** One event to one endpoint; `payload` is the exact body every attempt and replay sends. */
@Entity('webhook_deliveries')
export class WebhookDelivery {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'organization_id', type: 'text' })
  organizationId!: string;

  @Column({ name: 'endpoint_id', type: 'text' })
  endpointId!: string;

  @Column({ name: 'product_id', type: 'text', nullable: true })
  productId!: string | null;

  @Column({ name: 'event_id', type: 'text' })
  eventId!: string;

  @Column({ name: 'event_type', type: 'text' })
  eventType!: string;

  @Column({ type: 'text' })
  payload!: string;

  @Column({ type: 'text' })
  status!: DeliveryStatus;

  @Column({ name: 'attempt_count', type: 'integer' })
  attemptCount!: number;

  @Column({ name: 'last_error', type: 'text', nullable: true })
  lastError!: string | null;

  @Column({ name: 'replay_of_id', type: 'text', nullable: true })
  replayOfId!: string | null;

  @Column({ name: 'workflow_started', type: 'boolean' })
  workflowStarted!: boolean;

  /** The batch workflow that took the first attempt; null until one did (or for older deliveries). */
  @Column({ name: 'first_attempt_batch', type: 'text', nullable: true })
  firstAttemptBatch!: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column({ name: 'completed_at', type: 'timestamptz', nullable: true })
  completedAt!: Date | null;
}
