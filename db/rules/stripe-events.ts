import { timestampedHmacProblem } from '../../runtime/timestamped-hmac';
import type { ValueEventInput } from './value-events';

/** The processor's tolerance; a timestamp this far in the future is refused as well. */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

/**
 * Checks a `Stripe-Signature` header the way stripe-node's `webhooks.constructEvent` does: split at
 * `,` then at the first `=`; HMAC-SHA256 keyed by the whole secret string over `<t>.<raw body>`; any
 * `v1` may match, compared in constant time; stale past the tolerance. Stricter in one point: a
 * timestamp more than the tolerance in the future is refused too. Answers why it fails, or null.
 */
export function stripeSignatureProblem(header: string | undefined, rawBody: Buffer, secret: string | null, nowSeconds: number): string | null {
  if (!header) return 'the Stripe-Signature header is missing';
  if (!secret) return 'the connection has no signing secret yet';
  let timestamp: number | null = null;
  const signatures: string[] = [];
  for (const part of header.split(',')) {
    const at = part.indexOf('=');
    if (at < 0) continue;
    const key = part.slice(0, at);
    const value = part.slice(at + 1);
    if (key === 't' && /^\d{1,12}$/.test(value)) timestamp = Number(value);
    if (key === 'v1') signatures.push(value);
  }
  if (timestamp === null || signatures.length === 0) return 'unable to extract a timestamp and v1 signatures from the header';
  const problem = timestampedHmacProblem({ secret, timestamp, payload: rawBody, signatures, nowSeconds, toleranceSeconds: SIGNATURE_TOLERANCE_SECONDS });
  if (problem === 'mismatch') return 'no signature matches the expected signature for the payload';
  if (problem === 'stale') return 'the timestamp is outside the tolerance zone';
  if (problem === 'future') return 'the timestamp is too far in the future';
  return null;
}

type Obj = Record<string, any>;

export interface StripeEvent {
  id: string;
  type: string;
  created: number;
  data: { object: Obj; previous_attributes?: Obj };
}

export function isStripeEvent(value: unknown): value is StripeEvent {
  const v = value as Obj;
  return typeof v === 'object' && v !== null && typeof v.id === 'string' && v.id.length > 0 && v.id.length <= 255
    && typeof v.type === 'string' && Number.isInteger(v.created) && v.created >= 0
    && typeof v.data === 'object' && v.data !== null && typeof v.data.object === 'object' && v.data.object !== null
    && !Array.isArray(v.data.object);
}

const PER_MONTH: Record<string, number> = { day: 30, week: 52 / 12, month: 1, year: 1 / 12 };

function monthlyOf(unit: unknown, quantity: unknown, interval: unknown, count: unknown): number {
  const amount = typeof unit === 'number' ? unit : 0;
  const qty = typeof quantity === 'number' ? quantity : 1;
  const factor = PER_MONTH[String(interval)] ?? 1;
  const every = typeof count === 'number' && count > 0 ? count : 1;
  return (amount * qty * factor) / every;
}

/** A subscription's monthly amount in minor units: Σ items (price, else plan) × quantity, per interval. */
export function monthlyAmount(items: Obj | undefined, plan: Obj | undefined, quantity: unknown): number {
  const list: Obj[] = Array.isArray(items?.data) ? items!.data : [];
  if (list.length > 0) {
    return Math.round(list.reduce((sum, item) => {
      const price = item.price ?? {};
      const p = item.plan ?? {};
      return sum + monthlyOf(price.unit_amount ?? p.amount, item.quantity, price.recurring?.interval ?? p.interval,
        price.recurring?.interval_count ?? p.interval_count);
    }, 0));
  }
  if (plan) return Math.round(monthlyOf(plan.amount, quantity, plan.interval, plan.interval_count));
  return 0;
}

function planIdOf(items: Obj | undefined, plan: Obj | undefined): string | null {
  const first = Array.isArray(items?.data) ? items!.data[0] : undefined;
  return first?.price?.id ?? plan?.id ?? null;
}

function idOf(value: unknown): string | null {
  if (typeof value === 'string' && value.length > 0) return value;
  if (typeof value === 'object' && value !== null && typeof (value as Obj).id === 'string') return (value as Obj).id;
  return null;
}

export function stripeCustomer(event: StripeEvent): string | null {
  return idOf(event.data.object.customer);
}

function base(event: StripeEvent): Omit<ValueEventInput, 'type' | 'properties'> | null {
  const obj = event.data.object;
  const personRef = stripeCustomer(event);
  const endUserId = typeof obj.metadata?.endUserId === 'string' && obj.metadata.endUserId.length > 0 ? obj.metadata.endUserId : undefined;
  if (!personRef && !endUserId) return null;
  return {
    eventId: `stripe:${event.id}`,
    occurredAt: new Date(event.created * 1000).toISOString(),
    ...(personRef ? { personRef } : {}),
    ...(endUserId ? { endUserId } : {}),
  };
}

/** Checkouts paid and plan upgrades; invoices need the connection's count and are mapped by `invoiceMilestone`. */
export function mapStripeEvent(event: StripeEvent): ValueEventInput | null {
  const head = base(event);
  if (!head) return null;
  const obj = event.data.object;
  if (event.type === 'checkout.session.completed') {
    if (obj.payment_status !== 'paid') return null;
    return {
      ...head, type: 'purchase',
      properties: { amount: obj.amount_total ?? 0, currency: obj.currency ?? null, checkoutSessionId: obj.id ?? null, mode: obj.mode ?? null },
    };
  }
  if (event.type === 'customer.subscription.updated') {
    const prev = event.data.previous_attributes ?? {};
    if (!('items' in prev) && !('plan' in prev) && !('quantity' in prev)) return null;
    const toAmount = monthlyAmount(obj.items, obj.plan, obj.quantity);
    const oldItems = prev.items ?? obj.items;
    const oldPlan = prev.plan ?? obj.plan;
    const fromAmount = monthlyAmount(oldItems, oldPlan, 'quantity' in prev ? prev.quantity : obj.quantity);
    if (toAmount <= fromAmount) return null;
    const currency = obj.currency ?? obj.items?.data?.[0]?.price?.currency ?? obj.plan?.currency ?? null;
    return {
      ...head, type: 'plan_upgrade',
      properties: {
        fromPlan: planIdOf(oldItems, oldPlan) ?? 'unknown', toPlan: planIdOf(obj.items, obj.plan) ?? 'unknown',
        fromAmount, toAmount, currency, subscriptionId: obj.id ?? null,
      },
    };
  }
  return null;
}

/** A paid invoice that brings the customer's count of distinct paid invoices to a milestone. */
export function invoiceMilestone(event: StripeEvent, count: number): ValueEventInput | null {
  const head = base(event);
  if (!head) return null;
  const obj = event.data.object;
  return {
    ...head, type: 'milestone',
    properties: { name: 'paid_invoices', count, invoiceId: obj.id ?? null, amountPaid: obj.amount_paid, currency: obj.currency ?? null },
  };
}
