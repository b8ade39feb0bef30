import { Foundation1763712000000 } from './1763712000000-Foundation';
import { ProofCore1763712300000 } from './1763712300000-ProofCore';

export const MIGRATIONS = [Foundation1763712000000, ProofCore1763712300000];
