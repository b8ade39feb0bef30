import { Foundation1763712000000 } from './1763712000000-Foundation';
import { CustomerLoop1763712100000 } from './1763712100000-CustomerLoop';

export const MIGRATIONS = [Foundation1763712000000, CustomerLoop1763712100000];
