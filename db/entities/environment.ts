import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

@Entity('environments')
export class Environment {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'product_id', type: 'text' })
  productId!: string;

  @Column({ type: 'text' })
  name!: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
