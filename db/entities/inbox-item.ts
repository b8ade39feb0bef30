import { Column, Entity, PrimaryColumn } from 'typeorm';

/** One entry of an end user's in-app inbox: a thread reply or a release of a feature they care about. */
@Entity('inbox_items')
export class InboxItem {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'organization_id', type: 'text' })
  organizationId!: string;

  @Column({ name: 'product_id', type: 'text' })
  productId!: string;

  @Column({ name: 'end_user_id', type: 'text' })
  endUserId!: string;

  @Column({ name: 'thread_id', type: 'text', nullable: true })
  threadId!: string | null;

  @Column({ name: 'release_id', type: 'text', nullable: true })
  releaseId!: string | null;

  /** Set on a room's release receipt (docs/rooms.md#jobs-promises-solve-sessions-and-handoff). */
  @Column({ name: 'room_id', type: 'text', nullable: true })
  roomId!: string | null;

  /** Set on an item that delivers a person link (docs/collection.md#story-links-and-person-links): the person whose stories it opens. */
  @Column({ name: 'control_person_ref', type: 'text', nullable: true })
  controlPersonRef!: string | null;

  @Column({ name: 'control_expires_at', type: 'timestamptz', nullable: true })
  controlExpiresAt!: Date | null;

  @Column({ type: 'text' })
  subject!: string;

  @Column({ type: 'text' })
  preview!: string;

  @Column({ name: 'read_at', type: 'timestamptz', nullable: true })
  readAt!: Date | null;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
