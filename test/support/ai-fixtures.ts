import { randomBytes } from 'node:crypto';
import { FakeReply } from './fake-ai';
import { submissionBody } from './proof-fixtures';
import { ctx } from './root-hooks';

/** A marker of letters only: it adds no number to the story's pool. */
export const marker = () => `zq${[...randomBytes(8)].map((b) => String.fromCharCode(97 + (b % 26))).join('')}`;

/** The adversarial corpus's source story S (docs/ai.md#tests), tagged with a marker the fake provider answers to. */
export function storyS(m: string, consent: Record<string, unknown> = {}) {
  return submissionBody({
    content: {
      text: 'We cut onboarding from 9 days to 2 and save about $1,200 a month. Support answers within four hours.',
      title: 'Faster onboarding', rating: 4.5, answers: { teamSize: '12 people', ref: m },
      attribution: { name: 'Ada Lovelace', company: 'Analytical Ltd', title: 'CTO' },
    },
    customer: { personRef: 'cus_ada', email: 'ada@example.com', name: 'Ada Lovelace' },
    consent: {
      displayMode: 'first_name', identityFields: ['name'], channels: ['website', 'email'], products: { all: true }, media: ['text'],
      paidUseAllowed: false, translationAllowed: false, geography: ['*'], validUntil: '2027-06-30T00:00:00.000Z', customerApprovedWording: true,
      ...consent,
    },
    incentive: { offered: true, description: '$25 gift card' },
    verification: { state: 'unverified' },
  });
}

export const HONEST = {
  sentiment: 'positive',
  sentences: [{ text: 'Onboarding went from nine days to two.' }, { text: 'Ada says support answers within 4 hours.' }, { text: 'Rated 4.5 out of 5.' },
    { text: 'A dozen people use it.' }],
  caveats: [{ text: 'Incentivized: $25 gift card.' }, { text: 'Consent: website and email only; no paid ads.' }, { text: 'Verification: not verified.' }],
};

export async function withReply<T>(m: string, reply: FakeReply, run: () => Promise<T>): Promise<T> {
  const off = ctx.fakeAi.when(m, reply);
  try {
    return await run();
  } finally {
    off();
  }
}

/** Units of the organization's AI allowance used this month. */
export async function budgetUsed(organizationId: string): Promise<number> {
  const rows: Array<{ count: number }> = await ctx.dataSource.query(
    `SELECT count FROM intake_counters WHERE organization_id = $1 AND period = $2`, [organizationId, `ai:${new Date().toISOString().slice(0, 7)}`]);
  return rows[0]?.count ?? 0;
}
