import { Column, Entity, PrimaryColumn } from 'typeorm';

/** A consumed end-user token nonce, kept until the token it came from expires. */
@Entity('identity_nonces')
export class IdentityNonce {
  @PrimaryColumn({ name: 'product_id', type: 'text' })
  productId!: string;

  @PrimaryColumn({ type: 'text' })
  nonce!: string;

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt!: Date;
}
