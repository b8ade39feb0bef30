import { Column, Entity, PrimaryColumn } from 'typeorm';

/** A signal a teammate linked to a feature as evidence. */
@Entity('feature_signal_links')
export class FeatureSignalLink {
  @PrimaryColumn({ name: 'feature_id', type: 'text' })
  featureId!: string;

  @PrimaryColumn({ name: 'signal_id', type: 'text' })
  signalId!: string;

  @Column({ name: 'linked_by', type: 'text' })
  linkedBy!: string;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
