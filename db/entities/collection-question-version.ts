import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

export const QUESTION_KINDS = ['short_text', 'long_text', 'choice', 'yes_no'] as const;
export type QuestionKind = (typeof QUESTION_KINDS)[number];

/** One immutable version of a library question; a flow pins a question to one of these. */
@Entity('collection_question_versions')
export class CollectionQuestionVersion {
  @PrimaryColumn({ type: 'text' }) id!: string;
  @Column({ name: 'question_id', type: 'text' }) questionId!: string;
  @Column({ type: 'integer' }) version!: number;
  @Column({ type: 'text' }) text!: string;
  @Column({ type: 'text' }) kind!: QuestionKind;
  @Column({ name: 'help_text', type: 'text', nullable: true }) helpText!: string | null;
  @Column({ type: 'jsonb', nullable: true }) options!: string[] | null;
  @Column({ name: 'created_by', type: 'text', nullable: true }) createdBy!: string | null;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt!: Date;
}
