import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

export const WELCOME_VIDEO_STATES = ['uploading', 'assembling', 'screening', 'passed', 'held', 'cleared', 'blocked', 'removed'] as const;
export type WelcomeVideoState = (typeof WELCOME_VIDEO_STATES)[number];

/** A flow's welcome video: uploaded like customer media, served only once screened and referenced by the live version. */
@Entity('collection_welcome_videos')
export class CollectionWelcomeVideo {
  @PrimaryColumn({ type: 'text' }) id!: string;
  @Column({ name: 'organization_id', type: 'text' }) organizationId!: string;
  @Column({ name: 'product_id', type: 'text' }) productId!: string;
  @Column({ name: 'flow_id', type: 'text' }) flowId!: string;
  @Column({ name: 'upload_session_id', type: 'text', nullable: true }) uploadSessionId!: string | null;
  @Column({ name: 'media_id', type: 'text', nullable: true }) mediaId!: string | null;
  @Column({ type: 'text' }) state!: WelcomeVideoState;
  @Column({ type: 'bigint' }) size!: string;
  @Column({ type: 'text' }) sha256!: string;
  @Column({ name: 'reviewed_by', type: 'text', nullable: true }) reviewedBy!: string | null;
  @Column({ name: 'reviewed_at', type: 'timestamptz', nullable: true }) reviewedAt!: Date | null;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt!: Date;
  @Column({ name: 'updated_at', type: 'timestamptz' }) updatedAt!: Date;
}
