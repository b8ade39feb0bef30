import { Column, Entity, PrimaryColumn } from 'typeorm';

/** What the ask side knows about a person: opted out, last request sent. */
@Entity('proof_contact_preferences')
export class ProofContactPreference {
  @PrimaryColumn({ name: 'product_id', type: 'text' })
  productId!: string;

  @PrimaryColumn({ name: 'person_key', type: 'text' })
  personKey!: string;

  @Column({ name: 'opted_out_at', type: 'timestamptz', nullable: true })
  optedOutAt!: Date | null;

  @Column({ name: 'last_request_sent_at', type: 'timestamptz', nullable: true })
  lastRequestSentAt!: Date | null;
}
