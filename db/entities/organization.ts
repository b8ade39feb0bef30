import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/** A workspace. Only sponsored (internal) workspaces may hold service keys. */
@Entity('organizations')
export class Organization {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ type: 'text' })
  name!: string;

  @Column({ type: 'boolean', default: false })
  sponsored!: boolean;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
