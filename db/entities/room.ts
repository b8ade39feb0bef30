import { Column, Entity, PrimaryColumn } from 'typeorm';

export const ROOM_KINDS = ['general', 'feature', 'support', 'release'] as const;
export const ROOM_STATUSES = ['open', 'waiting', 'resolved', 'archived'] as const;
export const ROOM_VISIBILITIES = ['private', 'product'] as const;
export type RoomStatus = (typeof ROOM_STATUSES)[number];

/** bigint columns (seq, markers) as numbers: a room never reaches 2^53 events. */
export const bigintNumber = { to: (v: number | null) => v, from: (v: string | null) => (v === null ? null : Number(v)) };

/** A shared conversation space of one product (docs/rooms.md#room-states). */
@Entity('rooms')
export class Room {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'organization_id', type: 'text' })
  organizationId!: string;

  @Column({ name: 'product_id', type: 'text' })
  productId!: string;

  @Column({ type: 'text' })
  title!: string;

  @Column({ type: 'text' })
  kind!: (typeof ROOM_KINDS)[number];

  @Column({ type: 'text', nullable: true })
  purpose!: string | null;

  @Column({ type: 'text' })
  status!: RoomStatus;

  @Column({ type: 'text' })
  visibility!: (typeof ROOM_VISIBILITIES)[number];

  @Column({ name: 'created_by_type', type: 'text' })
  createdByType!: string;

  @Column({ name: 'created_by_principal_id', type: 'text' })
  createdByPrincipalId!: string;

  @Column({ name: 'thread_ids', type: 'text', array: true })
  threadIds!: string[];

  @Column({ name: 'feature_ids', type: 'text', array: true })
  featureIds!: string[];

  @Column({ name: 'head_seq', type: 'bigint', transformer: bigintNumber })
  headSeq!: number;

  /** The highest seq compaction removed (0: none); a reader behind it gets a snapshot. */
  @Column({ name: 'compacted_through', type: 'bigint', transformer: bigintNumber })
  compactedThrough!: number;

  @Column({ name: 'canvas_version', type: 'integer' })
  canvasVersion!: number;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}
