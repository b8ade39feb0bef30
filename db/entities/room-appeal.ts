import { Column, Entity, PrimaryColumn } from 'typeorm';

/** The author's appeal of an actioned case; a person decides it through its `appeal` approval. */
@Entity('room_appeals')
export class RoomAppeal {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'room_id', type: 'text' })
  roomId!: string;

  @Column({ name: 'case_id', type: 'text' })
  caseId!: string;

  @Column({ name: 'appellant_principal_id', type: 'text' })
  appellantPrincipalId!: string;

  @Column({ type: 'text' })
  statement!: string;

  @Column({ name: 'approval_id', type: 'text' })
  approvalId!: string;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
