import { Foundation1763712000000 } from './1763712000000-Foundation';

export const MIGRATIONS = [Foundation1763712000000];
