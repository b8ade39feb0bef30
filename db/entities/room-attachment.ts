import { Column, Entity, PrimaryColumn } from 'typeorm';

/** Bytes an end user uploaded to a room (kept in the media store); attached to at most one message. */
@Entity('room_attachments')
export class RoomAttachment {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'room_id', type: 'text' })
  roomId!: string;

  @Column({ name: 'product_id', type: 'text' })
  productId!: string;

  @Column({ name: 'uploader_principal_id', type: 'text' })
  uploaderPrincipalId!: string;

  @Column({ type: 'text', nullable: true })
  filename!: string | null;

  @Column({ name: 'content_type', type: 'text' })
  contentType!: string;

  @Column({ type: 'integer' })
  size!: number;

  @Column({ type: 'text' })
  sha256!: string;

  @Column({ name: 'storage_key', type: 'text' })
  storageKey!: string;

  @Column({ name: 'message_id', type: 'text', nullable: true })
  messageId!: string | null;

  @Column({ name: 'expired_at', type: 'timestamptz', nullable: true })
  expiredAt!: Date | null;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
