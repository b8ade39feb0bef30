import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/** A processor event seen once per connection. */
@Entity('proof_processor_events')
export class ProofProcessorEvent {
  @PrimaryColumn({ name: 'connection_id', type: 'text' })
  connectionId!: string;

  @PrimaryColumn({ name: 'processor_event_id', type: 'text' })
  processorEventId!: string;

  @Column({ type: 'text' })
  type!: string;

  @Column({ name: 'value_event_id', type: 'text', nullable: true })
  valueEventId!: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
