import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/** A health check finding, at most one per check, subject and UTC day. */
@Entity('proof_health_findings')
export class ProofHealthFinding {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'organization_id', type: 'text' })
  organizationId!: string;

  @Column({ name: 'product_id', type: 'text' })
  productId!: string;

  @Column({ name: 'check_name', type: 'text' })
  checkName!: string;

  @Column({ name: 'subject_id', type: 'text' })
  subjectId!: string;

  @Column({ type: 'date' })
  day!: string;

  @Column({ name: 'proof_item_id', type: 'text', nullable: true })
  proofItemId!: string | null;

  @Column({ name: 'placement_id', type: 'text', nullable: true })
  placementId!: string | null;

  @Column({ type: 'jsonb' })
  properties!: unknown;

  @Column({ name: 'last_seen_at', type: 'timestamptz' })
  lastSeenAt!: Date;

  @Column({ name: 'resolved_at', type: 'timestamptz', nullable: true })
  resolvedAt!: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
