import { Column, Entity, PrimaryColumn } from 'typeorm';
import { bigintNumber } from './room';

export const MEMBER_STATES = ['invited', 'joined', 'left', 'removed'] as const;
export type MemberState = (typeof MEMBER_STATES)[number];
export type PrincipalType = 'end_user' | 'teammate' | 'agent';

/** One principal's place in a room: who, with which role and visibility, and how far it has read. */
@Entity('room_members')
export class RoomMember {
  @PrimaryColumn({ name: 'room_id', type: 'text' })
  roomId!: string;

  @PrimaryColumn({ name: 'principal_id', type: 'text' })
  principalId!: string;

  @Column({ name: 'product_id', type: 'text' })
  productId!: string;

  @Column({ type: 'text' })
  type!: PrincipalType;

  @Column({ name: 'end_user_id', type: 'text', nullable: true })
  endUserId!: string | null;

  @Column({ name: 'teammate_id', type: 'text', nullable: true })
  teammateId!: string | null;

  @Column({ type: 'text', nullable: true })
  alias!: string | null;

  @Column({ type: 'text' })
  role!: 'owner' | 'customer' | 'teammate' | 'agent';

  @Column({ type: 'text' })
  visibility!: 'external' | 'internal';

  @Column({ type: 'text' })
  state!: MemberState;

  @Column({ name: 'invited_at', type: 'timestamptz' })
  invitedAt!: Date;

  @Column({ name: 'joined_at', type: 'timestamptz', nullable: true })
  joinedAt!: Date | null;

  @Column({ name: 'read_marker', type: 'bigint', transformer: bigintNumber })
  readMarker!: number;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
