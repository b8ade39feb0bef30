import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

export const QUESTION_STATES = ['active', 'archived'] as const;
export type QuestionState = (typeof QUESTION_STATES)[number];

/** A question of the workspace's library; its text lives in immutable versions. */
@Entity('collection_questions')
export class CollectionQuestion {
  @PrimaryColumn({ type: 'text' }) id!: string;
  @Column({ name: 'organization_id', type: 'text' }) organizationId!: string;
  @Column({ type: 'text' }) state!: QuestionState;
  @Column({ name: 'latest_version', type: 'integer' }) latestVersion!: number;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt!: Date;
  @Column({ name: 'updated_at', type: 'timestamptz' }) updatedAt!: Date;
}
