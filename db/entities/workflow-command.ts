import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';
import type { WorkflowCommandBody } from '../workflow-commands';

/**
 * A workflow start or signal that a committed change needs, written in the change's transaction. The
 * worker's command relay hands it to Temporal, in order per `orderingKey`, so a Temporal outage delays
 * it and never drops it.
 */
@Entity('workflow_commands')
export class WorkflowCommand {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  seq!: string;

  @Column({ name: 'ordering_key', type: 'text' })
  orderingKey!: string;

  @Column({ type: 'jsonb' })
  command!: WorkflowCommandBody;

  @Column({ type: 'integer', default: 0 })
  attempts!: number;

  @Column({ name: 'claimed_until', type: 'timestamptz', nullable: true })
  claimedUntil!: Date | null;

  @Column({ name: 'last_error', type: 'text', nullable: true })
  lastError!: string | null;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column({ name: 'processed_at', type: 'timestamptz', nullable: true })
  processedAt!: Date | null;
}
