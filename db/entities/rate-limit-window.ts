import { Column, Entity, PrimaryColumn } from 'typeorm';

/** Requests of one key in one fixed minute; shared by every API process. */
@Entity('rate_limit_windows')
export class RateLimitWindow {
  @PrimaryColumn({ name: 'key_id', type: 'text' })
  keyId!: string;

  @PrimaryColumn({ name: 'window_start', type: 'timestamptz' })
  windowStart!: Date;

  @Column({ type: 'integer' })
  count!: number;
}
