import { Column, Entity, PrimaryColumn } from 'typeorm';

/** A recorded solve session of a room; joining it takes consent to exactly its recording terms. */
@Entity('room_solve_sessions')
export class RoomSolveSession {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'room_id', type: 'text' })
  roomId!: string;

  @Column({ name: 'job_id', type: 'text' })
  jobId!: string;

  @Column({ type: 'text' })
  state!: 'open' | 'ended';

  @Column({ name: 'terms_version', type: 'text' })
  termsVersion!: string;

  @Column({ name: 'terms_text', type: 'text' })
  termsText!: string;

  @Column({ name: 'terms_sha256', type: 'text' })
  termsSha256!: string;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column({ name: 'ended_at', type: 'timestamptz', nullable: true })
  endedAt!: Date | null;
}

/** One principal's consent to a session's recording terms, given when it joined. */
@Entity('room_solve_participants')
export class RoomSolveParticipant {
  @PrimaryColumn({ name: 'session_id', type: 'text' })
  sessionId!: string;

  @PrimaryColumn({ name: 'principal_id', type: 'text' })
  principalId!: string;

  @Column({ name: 'consent_id', type: 'text' })
  consentId!: string;

  @Column({ name: 'terms_version', type: 'text' })
  termsVersion!: string;

  @Column({ name: 'terms_sha256', type: 'text' })
  termsSha256!: string;

  @Column({ name: 'accepted_at', type: 'timestamptz' })
  acceptedAt!: Date;
}
