import { DataSource } from 'typeorm';
import { enqueueEvent } from '../outbox';
import { recipientKeys } from './drafts';
import { liveFlow } from './pinned-flow';

const DAY_MS = 86_400_000;
const NOT_NOW_DAYS = 14;
const RESPONDED_DAYS = 90;

export interface PromptPerson { organizationId: string; productId: string; endUserId: string }

/** May the prompt of a flow show to this end user now, and if not, why (docs/collection.md#endpoints-customers). */
export async function promptState(ds: DataSource, who: PromptPerson, flowId: string) {
  const none = { channelPreference: null as string | null, nextEligibleAt: null as string | null };
  let flow;
  try {
    flow = await liveFlow(ds.manager, flowId, who.productId);
  } catch (err) {
    if ((err as { status?: number }).status === 409) return { show: false, reason: 'flow_not_live', ...none };
    throw err;
  }
  const [choice]: Array<{ not_now_until: Date | null; channel_preference: string | null }> = await ds.query(
    `SELECT not_now_until, channel_preference FROM collection_prompt_choices WHERE product_id = $1 AND end_user_id = $2 AND flow_id = $3`,
    [who.productId, who.endUserId, flow.flowId]);
  const channelPreference = choice?.channel_preference ?? null;
  const keys = recipientKeys({ endUserId: who.endUserId, personRef: `end_user:${who.endUserId}` });
  const suppressions: Array<{ via: string }> = await ds.query(
    `SELECT via FROM collection_suppressions WHERE product_id = $1 AND recipient_key = ANY($2)`, [who.productId, keys]);
  if (suppressions.some((s) => s.via === 'never_ask')) return { show: false, reason: 'never_ask', channelPreference, nextEligibleAt: null };
  if (suppressions.length) return { show: false, reason: 'opted_out', channelPreference, nextEligibleAt: null };
  if (choice?.not_now_until && choice.not_now_until.getTime() > Date.now()) {
    return { show: false, reason: 'not_now', channelPreference, nextEligibleAt: choice.not_now_until.toISOString() };
  }
  const [responded]: Array<{ submitted_at: Date }> = await ds.query(
    `SELECT submitted_at FROM collection_drafts WHERE product_id = $1 AND end_user_id = $2 AND flow_id = $3 AND status = 'submitted'
       AND submitted_at > now() - interval '${RESPONDED_DAYS} days' ORDER BY submitted_at DESC LIMIT 1`,
    [who.productId, who.endUserId, flow.flowId]);
  if (responded) {
    return {
      show: false, reason: 'already_responded', channelPreference,
      nextEligibleAt: new Date(responded.submitted_at.getTime() + RESPONDED_DAYS * DAY_MS).toISOString(),
    };
  }
  return { show: true, reason: 'eligible', channelPreference, nextEligibleAt: null };
}

export type PromptChoice = { flowId: string; choice: 'not_now' | 'never_ask' | 'prefer_channel'; channel?: string };

/** Records the end user's answer to the prompt; `never_ask` suppresses them as an opt-out does. */
export async function recordPromptChoice(ds: DataSource, who: PromptPerson, body: PromptChoice) {
  await ds.transaction(async (em) => {
    const flow = await liveFlow(em, body.flowId, who.productId).catch((err) => {
      if ((err as { status?: number }).status === 409) return null;
      throw err;
    });
    const flowId = flow?.flowId ?? body.flowId;
    if (body.choice === 'never_ask') {
      for (const key of recipientKeys({ endUserId: who.endUserId, personRef: `end_user:${who.endUserId}` })) {
        await em.query(
          `INSERT INTO collection_suppressions (organization_id, product_id, recipient_key, via) VALUES ($1, $2, $3, 'never_ask')
           ON CONFLICT (product_id, recipient_key) DO UPDATE SET via = 'never_ask'`, [who.organizationId, who.productId, key]);
      }
      await enqueueEvent(em, {
        organizationId: who.organizationId, productId: who.productId, type: 'proof.request.opted_out',
        data: { requestId: null, via: 'never_ask' },
      });
      return;
    }
    const notNowUntil = body.choice === 'not_now' ? new Date(Date.now() + NOT_NOW_DAYS * DAY_MS) : null;
    await em.query(
      `INSERT INTO collection_prompt_choices (product_id, end_user_id, flow_id, not_now_until, channel_preference) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (product_id, end_user_id, flow_id) DO UPDATE SET
         not_now_until = coalesce(EXCLUDED.not_now_until, collection_prompt_choices.not_now_until),
         channel_preference = coalesce(EXCLUDED.channel_preference, collection_prompt_choices.channel_preference), updated_at = now()`,
      [who.productId, who.endUserId, flowId, notNowUntil, body.choice === 'prefer_channel' ? body.channel : null]);
  });
  return promptState(ds, who, body.flowId);
}
