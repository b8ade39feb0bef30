import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity('webhook_attempts')
export class WebhookAttempt {
  @PrimaryColumn({ name: 'delivery_id', type: 'text' })
  deliveryId!: string;

  @PrimaryColumn({ type: 'integer' })
  attempt!: number;

  @Column({ name: 'started_at', type: 'timestamptz' })
  startedAt!: Date;

  @Column({ name: 'duration_ms', type: 'integer' })
  durationMs!: number;

  @Column({ name: 'status_code', type: 'integer', nullable: true })
  statusCode!: number | null;

  @Column({ type: 'text', nullable: true })
  error!: string | null;

  @Column({ name: 'response_excerpt', type: 'text', nullable: true })
  responseExcerpt!: string | null;
}
