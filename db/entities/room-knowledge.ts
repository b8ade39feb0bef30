import { Column, Entity, PrimaryColumn } from 'typeorm';

/** Canonical knowledge proposed from a room; only a person's approval publishes it. */
@Entity('room_knowledge')
export class RoomKnowledge {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'room_id', type: 'text' })
  roomId!: string;

  @Column({ type: 'text' })
  title!: string;

  @Column({ type: 'text' })
  body!: string;

  @Column({ name: 'document_id', type: 'text', nullable: true })
  documentId!: string | null;

  @Column({ name: 'source_ids', type: 'text', array: true })
  sourceIds!: string[];

  @Column({ type: 'text' })
  state!: 'pending_approval' | 'published' | 'rejected';

  @Column({ name: 'approval_id', type: 'text' })
  approvalId!: string;

  @Column({ name: 'published_at', type: 'timestamptz', nullable: true })
  publishedAt!: Date | null;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
