import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/** A signed-in teammate. Only the token's SHA-256 digest is stored; the CSRF token pairs with it. */
@Entity('teammate_sessions')
export class TeammateSession {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'teammate_id', type: 'text' })
  teammateId!: string;

  @Column({ name: 'token_digest', type: 'text' })
  tokenDigest!: string;

  @Column({ name: 'csrf_token', type: 'text' })
  csrfToken!: string;

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt!: Date;

  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true })
  revokedAt!: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
