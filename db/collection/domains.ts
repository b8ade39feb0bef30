import { isIP } from 'node:net';
import { randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { conflict, notFound, validationFailed } from '../../runtime/service-error';
import { CollectionDomain } from '../entities';
import { DomainJudgement, verifyName, verifyValue } from '../rules/domain-verification';
import { newId } from '../rules/ids';
import { enqueueWorkflowCommand } from '../workflow-commands';
import { findFlow } from './flows';
import { dbNow } from '../clock';

export const MAX_DOMAINS_PER_FLOW = 5;
const HOSTNAME = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{0,61}[a-z0-9]$/;

/** The DNS records a customer sets: a CNAME to the collection host and a TXT proving ownership. */
export function viewDomain(d: CollectionDomain, cnameTarget: string) {
  return {
    id: d.id,
    flowId: d.flowId,
    hostname: d.hostname,
    status: d.status,
    records: [
      { type: 'CNAME', name: d.hostname, value: cnameTarget },
      { type: 'TXT', name: verifyName(d.hostname), value: verifyValue(d.verificationToken) },
    ],
    verifiedAt: d.verifiedAt?.toISOString() ?? null,
    lastCheckedAt: d.lastCheckedAt?.toISOString() ?? null,
    lastError: d.lastError,
    createdAt: d.createdAt.toISOString(),
  };
}

export function normalizeHostname(raw: string): string {
  const host = raw.trim().toLowerCase().replace(/\.$/, '');
  if (isIP(host) || isIP(host.replace(/^\[|\]$/g, ''))) {
    throw validationFailed([{ path: 'hostname', message: 'must be a hostname, not an IP address' }]);
  }
  if (!HOSTNAME.test(host)) throw validationFailed([{ path: 'hostname', message: 'must be a hostname such as stories.example.com' }]);
  return host;
}

export async function listDomains(ds: DataSource, organizationId: string, flowId: string) {
  await findFlow(ds.manager, organizationId, flowId);
  return ds.getRepository(CollectionDomain).find({ where: { flowId, organizationId }, order: { createdAt: 'ASC' } });
}

export interface DomainCheckSettings { checkIntervalMs: number; verifyTtlMs: number }

/**
 * A new hostname for the flow, pending until its records verify; at most five per flow. Only a verified
 * claim holds a hostname: another flow's (or workspace's) pending or failed claim of it blocks nothing,
 * each claim has its own token, and the first whose records verify wins; a hostname verified by another
 * flow is 409. The same flow's hostname again asks for a check now (`created: false`); a `failed` one gets
 * a new verification window. Either way the `collection-domain/<id>` workflow is asked through the outbox.
 */
export async function addDomain(ds: DataSource, organizationId: string, flowId: string, rawHostname: string, settings: DomainCheckSettings) {
  const hostname = normalizeHostname(rawHostname);
  return ds.transaction(async (em) => {
    const flow = await findFlow(em, organizationId, flowId, true);
    const holder = await em.getRepository(CollectionDomain).findOneBy({ hostname, status: 'verified' });
    if (holder && holder.flowId !== flowId) throw conflict('this hostname is already verified for another flow');
    const own = await em.getRepository(CollectionDomain).findOneBy({ flowId, hostname });
    let id = own?.id;
    if (own?.status === 'failed') {
      await em.getRepository(CollectionDomain).update({ id: own.id }, { status: 'pending_verification' });
    }
    if (!own) {
      const [{ n }] = await em.query('SELECT count(*)::int AS n FROM collection_domains WHERE flow_id = $1', [flowId]);
      if (n >= MAX_DOMAINS_PER_FLOW) throw validationFailed([{ path: 'hostname', message: `a flow has at most ${MAX_DOMAINS_PER_FLOW} domains` }]);
      id = newId('cdm');
      await em.getRepository(CollectionDomain).insert({
        id, organizationId, flowId, hostname, status: 'pending_verification', verificationToken: randomBytes(16).toString('hex'),
      });
    }
    if (own?.status !== 'verified') {
      await enqueueWorkflowCommand(em, {
        type: 'collection.domain.check', tenant: { organizationId, productId: flow.productId }, domainId: id!,
        intervalMs: settings.checkIntervalMs, deadline: new Date(Date.now() + settings.verifyTtlMs).toISOString(),
      });
    }
    return { domain: await em.getRepository(CollectionDomain).findOneByOrFail({ id: id! }), created: !own };
  });
}

const HOSTNAME_TAKEN = 'the hostname was verified for another flow first';

/**
 * Records one DNS check (the verification workflow's activity): `verified` is final; otherwise the
 * domain stays pending with what is missing. `gone` when the domain was removed meanwhile; `failed` when
 * another flow's claim of the hostname verified first (checked before the lookup, and again by the
 * partial unique index when two claims verify at once): a claim that lost is failed and serves nothing.
 */
export async function recordDomainCheck(
  ds: DataSource, domainId: string, judge: (d: CollectionDomain) => Promise<DomainJudgement>,
): Promise<'verified' | 'pending' | 'gone' | 'failed'> {
  const domain = await ds.getRepository(CollectionDomain).findOneBy({ id: domainId });
  if (!domain) return 'gone';
  if (domain.status !== 'pending_verification') return domain.status === 'verified' ? 'verified' : 'failed';
  if (await hostnameHeldElsewhere(ds, domain)) return loseClaim(ds, domainId);
  const outcome = await judge(domain);
  if (!outcome.verified) {
    await ds.getRepository(CollectionDomain).update({ id: domainId, status: 'pending_verification' }, {
      lastCheckedAt: dbNow, lastError: outcome.problems.join('; '),
    });
    return 'pending';
  }
  try {
    const [, won]: [unknown, number] = await ds.query(
      `UPDATE collection_domains SET status = 'verified', verified_at = now(), last_checked_at = now(), last_error = NULL
        WHERE id = $1 AND status = 'pending_verification'`, [domainId]);
    if (won === 1) {
      // The claims that lost hear it at once rather than at their next check.
      await ds.query(
        `UPDATE collection_domains SET status = 'failed', last_checked_at = now(), last_error = $3
          WHERE hostname = $1 AND id <> $2 AND status = 'pending_verification'`, [domain.hostname, domainId, HOSTNAME_TAKEN]);
      return 'verified';
    }
  } catch (err) {
    // The partial unique index: another claim verified in the meantime.
    if ((err as { code?: string }).code !== '23505') throw err;
    return loseClaim(ds, domainId);
  }
  // Removed, or failed by a claim that won, between the read and the update.
  return (await ds.getRepository(CollectionDomain).findOneBy({ id: domainId })) ? 'failed' : 'gone';
}

async function hostnameHeldElsewhere(ds: DataSource, domain: CollectionDomain): Promise<boolean> {
  return ds.getRepository(CollectionDomain).existsBy({ hostname: domain.hostname, status: 'verified' });
}

async function loseClaim(ds: DataSource, domainId: string): Promise<'failed'> {
  await ds.query(
    `UPDATE collection_domains SET status = 'failed', last_checked_at = now(), last_error = $2 WHERE id = $1 AND status = 'pending_verification'`,
    [domainId, HOSTNAME_TAKEN]);
  return 'failed';
}

/** The verification window closed with the records still missing. */
export async function failDomain(ds: DataSource, domainId: string): Promise<void> {
  await ds.query(`UPDATE collection_domains SET status = 'failed' WHERE id = $1 AND status = 'pending_verification'`, [domainId]);
}

export async function removeDomain(ds: DataSource, organizationId: string, flowId: string, rawHostname: string) {
  const hostname = normalizeHostname(rawHostname);
  await findFlow(ds.manager, organizationId, flowId);
  const result = await ds.getRepository(CollectionDomain).delete({ flowId, organizationId, hostname });
  if (!result.affected) throw notFound('domain');
}

export interface CustomerOrigins {
  /** `https://<hostname>` of every verified domain, lower case. */
  domains: Set<string>;
  /** Every `allowedOrigins` entry of a live flow's live version, as written. */
  flowOrigins: Set<string>;
}

/**
 * The browser origins that may call the customer routes (docs/collection.md#customers): verified domains of flows
 * and `allowedOrigins` of live flows' live versions, all products at once (a customer route's origin
 * check does not depend on its product). The collection page's own origin is the caller's to add.
 */
export async function customerOrigins(ds: DataSource): Promise<CustomerOrigins> {
  const rows: Array<{ kind: 'domain' | 'flow'; origin: string }> = await ds.query(
    `SELECT 'domain' AS kind, 'https://' || hostname AS origin FROM collection_domains WHERE status = 'verified'
     UNION
     SELECT 'flow', o.origin FROM collection_flows f JOIN collection_flow_versions v ON v.id = f.live_version_id
       CROSS JOIN LATERAL jsonb_array_elements_text(v.definition -> 'allowedOrigins') AS o(origin)
      WHERE f.state = 'live' AND jsonb_typeof(v.definition -> 'allowedOrigins') = 'array'`);
  const origins: CustomerOrigins = { domains: new Set(), flowOrigins: new Set() };
  for (const row of rows) (row.kind === 'domain' ? origins.domains : origins.flowOrigins).add(row.origin);
  return origins;
}

/** A verified domain matches whatever the case of the origin; a flow's entry matches exactly. */
export function customerOriginAllowed(origins: CustomerOrigins, origin: string): boolean {
  return origins.domains.has(origin.toLowerCase()) || origins.flowOrigins.has(origin);
}

/** The flow a verified collection domain serves (its pages answer at the domain's root), or null. */
export async function verifiedDomainFlow(ds: DataSource, rawHostname: string): Promise<{ flowId: string; publicId: string } | null> {
  if (!rawHostname || rawHostname.length > 253) return null;
  const rows: Array<{ flow_id: string; public_id: string }> = await ds.query(
    `SELECT d.flow_id, f.public_id FROM collection_domains d JOIN collection_flows f ON f.id = d.flow_id
      WHERE d.hostname = $1 AND d.status = 'verified'`, [rawHostname.toLowerCase().replace(/\.$/, '')]);
  return rows[0] ? { flowId: rows[0].flow_id, publicId: rows[0].public_id } : null;
}
