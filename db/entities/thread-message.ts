import { Column, Entity, PrimaryColumn } from 'typeorm';

export const MESSAGE_VISIBILITIES = ['customer', 'internal'] as const;
export type MessageVisibility = (typeof MESSAGE_VISIBILITIES)[number];

/** One message of a thread; `internal` notes never leave the workspace. */
@Entity('thread_messages')
export class ThreadMessage {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'thread_id', type: 'text' })
  threadId!: string;

  @Column({ name: 'author_type', type: 'text' })
  authorType!: 'end_user' | 'teammate';

  @Column({ name: 'author_id', type: 'text' })
  authorId!: string;

  @Column({ type: 'text' })
  visibility!: MessageVisibility;

  @Column({ type: 'text' })
  body!: string;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
