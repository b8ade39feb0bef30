/** Custom collection domains (docs/collection.md#domains-and-qr): what their DNS answers must show. Pure. */

export const VERIFY_LABEL = '_proof-verify';
export const verifyName = (hostname: string) => `${VERIFY_LABEL}.${hostname}`;
export const verifyValue = (token: string) => `proof-verify=${token}`;

/** What a lookup found: null when the name has no such record. */
export interface DomainAnswers {
  /** TXT records of `_proof-verify.<hostname>`, each as its strings (a long value comes split). */
  txt: string[][] | null;
  /** CNAME targets of the hostname. */
  cname: string[] | null;
}

export interface DomainJudgement {
  verified: boolean;
  /** Why not, one sentence per missing record; empty when verified. */
  problems: string[];
}

const bare = (name: string) => name.trim().toLowerCase().replace(/\.$/, '');

/** Verified when the TXT proves ownership and the hostname points at the collection host. */
export function judgeDomain(hostname: string, token: string, cnameTarget: string, answers: DomainAnswers): DomainJudgement {
  const problems: string[] = [];
  const expected = verifyValue(token);
  if (!(answers.txt ?? []).some((chunks) => chunks.join('') === expected)) {
    problems.push(`TXT ${verifyName(hostname)} must be ${expected}`);
  }
  const targets = (answers.cname ?? []).map(bare);
  if (!targets.includes(bare(cnameTarget))) {
    problems.push(`CNAME ${hostname} must point to ${bare(cnameTarget)}${targets.length ? ` (it points to ${targets.join(', ')})` : ''}`);
  }
  return { verified: problems.length === 0, problems };
}
