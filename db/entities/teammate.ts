import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

export const TEAMMATE_ROLES = ['owner', 'admin', 'member'] as const;
export type TeammateRole = (typeof TEAMMATE_ROLES)[number];

@Entity('teammates')
export class Teammate {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'organization_id', type: 'text' })
  organizationId!: string;

  @Column({ type: 'text' })
  email!: string;

  @Column({ type: 'text' })
  role!: TeammateRole;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
