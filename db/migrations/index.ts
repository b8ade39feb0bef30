import { Foundation1763712000000 } from './1763712000000-Foundation';
import { CustomerLoop1763712100000 } from './1763712100000-CustomerLoop';
import { Webhooks1763712200000 } from './1763712200000-Webhooks';
import { ProofCore1763712300000 } from './1763712300000-ProofCore';
import { ProofPlacements1763712400000 } from './1763712400000-ProofPlacements';
import { ProofAi1763712500000 } from './1763712500000-ProofAi';
import { Hardening1763712700000 } from './1763712700000-Hardening';
import { Performance1763712900000 } from './1763712900000-Performance';

export const MIGRATIONS = [
  Foundation1763712000000, CustomerLoop1763712100000, Webhooks1763712200000, ProofCore1763712300000,
  ProofPlacements1763712400000, ProofAi1763712500000, Hardening1763712700000, Performance1763712900000,
];
