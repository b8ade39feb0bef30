import type { FieldIssue } from '../../runtime/service-error';

export const DEAL_FORMATS = ['generic', 'hubspot', 'salesforce'] as const;
export type DealFormat = (typeof DEAL_FORMATS)[number];
export type DealStatus = 'open' | 'won' | 'lost';

export interface NormalisedDeal {
  externalId: string;
  name: string | null;
  stage: string | null;
  status: DealStatus;
  amount: number | null;
  currency: string | null;
  closeDate: string | null;
  accountName: string | null;
  accountDomain: string | null;
  contacts: Array<{ personRef: string | null; email: string | null }>;
  updatedAt: Date | null;
  proofItemIds: string[];
}

type Obj = Record<string, unknown>;
const GENERIC_FIELDS = ['id', 'name', 'stage', 'status', 'amount', 'currency', 'closeDate', 'accountName', 'accountDomain', 'contacts', 'updatedAt',
  'proofItemIds'];
const DATE = /^\d{4}-\d{2}-\d{2}$/;

class Reader {
  constructor(readonly issues: FieldIssue[], readonly at: string) {}
  private bad(key: string, message: string) {
    this.issues.push({ path: `${this.at}.${key}`, message });
    return null;
  }
  str(o: Obj, key: string, max = 500, required = false): string | null {
    const v = o[key];
    if (v === undefined || v === null) return required ? this.bad(key, 'is required') : null;
    if (typeof v === 'number' && !required) return String(v);
    if (typeof v !== 'string' || v.length === 0 || v.length > max) return this.bad(key, `must be a string of 1 to ${max} characters`);
    return v;
  }
  num(o: Obj, key: string): number | null {
    const v = o[key];
    if (v === undefined || v === null || v === '') return null;
    const n = typeof v === 'string' ? Number(v) : v;
    if (typeof n !== 'number' || !Number.isFinite(n) || n < 0) return this.bad(key, 'must be a number ≥ 0');
    return n;
  }
  date(o: Obj, key: string): string | null {
    const v = this.str(o, key, 40);
    if (v === null) return null;
    const day = v.slice(0, 10);
    if (!DATE.test(day) || Number.isNaN(Date.parse(day))) return this.bad(key, 'must be a date (YYYY-MM-DD)');
    return day;
  }
  time(o: Obj, key: string): Date | null {
    const v = o[key];
    if (v === undefined || v === null) return null;
    const t = typeof v === 'string' || typeof v === 'number' ? new Date(v) : new Date(NaN);
    if (Number.isNaN(t.getTime())) return this.bad(key, 'must be a date-time');
    return t;
  }
  currency(o: Obj, key: string): string | null {
    const v = this.str(o, key, 3);
    if (v !== null && !/^[A-Za-z]{3}$/.test(v)) return this.bad(key, 'must be a 3-letter currency code');
    return v?.toUpperCase() ?? null;
  }
  ids(value: unknown, key: string): string[] {
    if (value === undefined || value === null || value === '') return [];
    const list = typeof value === 'string' ? value.split(';').map((s) => s.trim()).filter(Boolean) : value;
    if (!Array.isArray(list) || list.length > 50 || list.some((x) => typeof x !== 'string' || x.length === 0 || x.length > 100)) {
      this.bad(key, 'must list at most 50 proof item ids');
      return [];
    }
    return [...new Set(list as string[])];
  }
}

function generic(d: Obj, r: Reader): NormalisedDeal {
  for (const key of Object.keys(d)) if (!GENERIC_FIELDS.includes(key)) r.issues.push({ path: `${r.at}.${key}`, message: `${key} is not an allowed property` });
  const status = d.status ?? 'open';
  if (!['open', 'won', 'lost'].includes(String(status))) r.issues.push({ path: `${r.at}.status`, message: 'must be one of open, won, lost' });
  const contacts = Array.isArray(d.contacts) ? d.contacts : d.contacts === undefined ? [] : null;
  if (contacts === null || contacts.length > 100 || contacts.some((c) => typeof c !== 'object' || c === null)) {
    r.issues.push({ path: `${r.at}.contacts`, message: 'must be a list of {personRef, email}' });
  }
  return {
    externalId: r.str(d, 'id', 200, true) ?? '',
    name: r.str(d, 'name'), stage: r.str(d, 'stage', 200), status: status as DealStatus, amount: r.num(d, 'amount'),
    currency: r.currency(d, 'currency'), closeDate: r.date(d, 'closeDate'), accountName: r.str(d, 'accountName'),
    accountDomain: r.str(d, 'accountDomain', 253),
    contacts: (contacts ?? []).map((c: Obj) => ({ personRef: typeof c.personRef === 'string' ? c.personRef : null,
      email: typeof c.email === 'string' ? c.email : null })),
    updatedAt: r.time(d, 'updatedAt'), proofItemIds: r.ids(d.proofItemIds, 'proofItemIds'),
  };
}

function hubspot(d: Obj, r: Reader): NormalisedDeal {
  const p = (typeof d.properties === 'object' && d.properties !== null ? d.properties : {}) as Obj;
  const pr = new Reader(r.issues, `${r.at}.properties`);
  const stage = pr.str(p, 'dealstage', 200);
  const status: DealStatus = p.hs_is_closed_won === 'true' ? 'won' : p.hs_is_closed === 'true' ? 'lost'
    : stage === 'closedwon' ? 'won' : stage === 'closedlost' ? 'lost' : 'open';
  return {
    externalId: r.str(d, 'id', 200, true) ?? '', name: pr.str(p, 'dealname'), stage, status, amount: pr.num(p, 'amount'),
    currency: pr.currency(p, 'deal_currency_code'), closeDate: pr.date(p, 'closedate'), accountName: null, accountDomain: null,
    contacts: [], updatedAt: r.time(d, 'updatedAt'),
    proofItemIds: [...new Set([...r.ids(d.proofItemIds, 'proofItemIds'), ...pr.ids(p.sv_proof_item_ids, 'sv_proof_item_ids')])],
  };
}

function salesforce(d: Obj, r: Reader): NormalisedDeal {
  const stage = r.str(d, 'StageName', 200);
  const status: DealStatus = d.IsWon === true ? 'won' : d.IsClosed === true ? 'lost'
    : stage === 'Closed Won' ? 'won' : stage === 'Closed Lost' ? 'lost' : 'open';
  return {
    externalId: r.str(d, 'Id', 200, true) ?? '', name: r.str(d, 'Name'), stage, status, amount: r.num(d, 'Amount'),
    currency: r.currency(d, 'CurrencyIsoCode'), closeDate: r.date(d, 'CloseDate'), accountName: r.str(d, 'AccountId', 200), accountDomain: null,
    contacts: [], updatedAt: r.time(d, 'LastModifiedDate'),
    proofItemIds: [...new Set([...r.ids(d.proofItemIds, 'proofItemIds'), ...r.ids(d.SV_Proof_Item_Ids__c, 'SV_Proof_Item_Ids__c')])],
  };
}

/** One shape for the three formats; vendor shapes ignore fields they do not name, the generic one refuses them. */
export function normaliseDeals(format: DealFormat, deals: unknown[]): { deals: NormalisedDeal[]; issues: FieldIssue[] } {
  const issues: FieldIssue[] = [];
  const out = deals.map((d, i) => {
    const r = new Reader(issues, `deals[${i}]`);
    if (typeof d !== 'object' || d === null || Array.isArray(d)) {
      issues.push({ path: `deals[${i}]`, message: 'must be an object' });
      return null;
    }
    return format === 'generic' ? generic(d as Obj, r) : format === 'hubspot' ? hubspot(d as Obj, r) : salesforce(d as Obj, r);
  });
  return { deals: out.filter((d): d is NormalisedDeal => d !== null), issues };
}
