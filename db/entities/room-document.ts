import { Column, Entity, PrimaryColumn } from 'typeorm';

export interface EvidenceItem {
  id: string;
  type: 'message' | 'signal';
  text: string;
}

export interface DocumentStatement {
  section: string;
  text: string;
  citations: Array<{ type: 'message' | 'signal'; id: string }>;
}

/** A PRD compiled from a room's customer-visible evidence; every kept statement cites it. */
@Entity('room_documents')
export class RoomDocument {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'room_id', type: 'text' })
  roomId!: string;

  @Column({ name: 'organization_id', type: 'text' })
  organizationId!: string;

  @Column({ name: 'product_id', type: 'text' })
  productId!: string;

  @Column({ type: 'text' })
  title!: string;

  @Column({ name: 'max_statements', type: 'integer' })
  maxStatements!: number;

  @Column({ type: 'text' })
  status!: 'compiling' | 'compiled' | 'discarded' | 'failed';

  @Column({ type: 'jsonb' })
  evidence!: EvidenceItem[];

  @Column({ type: 'jsonb' })
  statements!: DocumentStatement[];

  @Column({ type: 'jsonb' })
  rejected!: Array<{ text: string; reason: 'no_valid_citation' }>;

  @Column({ name: 'removed_citations', type: 'jsonb' })
  removedCitations!: Array<{ id: string; reason: 'unknown' | 'internal' | 'not_evidence' }>;

  @Column({ type: 'jsonb', nullable: true })
  model!: { provider: string; name: string } | null;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
