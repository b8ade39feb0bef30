import { Column, Entity, PrimaryColumn } from 'typeorm';

/** One saved version of a room's canvas; earlier versions stay readable. */
@Entity('room_canvas_versions')
export class RoomCanvasVersion {
  @PrimaryColumn({ name: 'room_id', type: 'text' })
  roomId!: string;

  @PrimaryColumn({ type: 'integer' })
  version!: number;

  @Column({ type: 'text' })
  content!: string;

  @Column({ name: 'updated_by_type', type: 'text' })
  updatedByType!: string;

  @Column({ name: 'updated_by_id', type: 'text', nullable: true })
  updatedById!: string | null;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}
