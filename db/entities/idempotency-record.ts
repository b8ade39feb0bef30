import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/** One Idempotency-Key of one credential: in progress, or the stored successful response (24 h). */
@Entity('idempotency_records')
export class IdempotencyRecord {
  @PrimaryColumn({ name: 'credential_id', type: 'text' })
  credentialId!: string;

  @PrimaryColumn({ name: 'idempotency_key', type: 'text' })
  idempotencyKey!: string;

  @Column({ name: 'request_hash', type: 'text' })
  requestHash!: string;

  @Column({ type: 'text' })
  state!: 'in_progress' | 'completed';

  /** Names the call that holds the key, so a late first call cannot finish or release a later claim. */
  @Column({ name: 'claim_token', type: 'text' })
  claimToken!: string;

  @Column({ name: 'status_code', type: 'integer', nullable: true })
  statusCode!: number | null;

  @Column({ name: 'response_body', type: 'text', nullable: true })
  responseBody!: string | null;

  @Column({ name: 'locked_until', type: 'timestamptz' })
  lockedUntil!: Date;

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt!: Date;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
