import { Resolver } from 'node:dns/promises';
import { DataSource } from 'typeorm';
import { failDomain, recordDomainCheck } from '../../db/collection/domains';
import { judgeDomain, verifyName } from '../../db/rules/domain-verification';
import { Config } from '../../runtime/config';

export interface DomainActivityDeps {
  dataSource: DataSource;
  config: Config;
}

// Answers that mean "no such record"; anything else (timeout, refused, SERVFAIL) is thrown and retried.
const ABSENT = new Set(['ENOTFOUND', 'ENODATA', 'ENONAME', 'NXDOMAIN']);

async function orNull<T>(lookup: Promise<T>): Promise<T | null> {
  try {
    return await lookup;
  } catch (err) {
    if (ABSENT.has((err as NodeJS.ErrnoException).code ?? '')) return null;
    throw err;
  }
}

/** DNS checks of custom collection domains with node:dns, against PROOF_DOMAIN_DNS_SERVERS when set. */
export function createDomainActivities({ dataSource, config }: DomainActivityDeps) {
  const resolver = () => {
    const r = new Resolver({ timeout: 5_000, tries: 2 });
    if (config.domainDnsServers.length) r.setServers(config.domainDnsServers);
    return r;
  };
  return {
    async checkCollectionDomain(domainId: string): Promise<'verified' | 'pending' | 'gone' | 'failed'> {
      return recordDomainCheck(dataSource, domainId, async (d) => {
        const r = resolver();
        const [txt, cname] = await Promise.all([orNull(r.resolveTxt(verifyName(d.hostname))), orNull(r.resolveCname(d.hostname))]);
        return judgeDomain(d.hostname, d.verificationToken, config.collectCnameTarget, { txt, cname });
      });
    },
    async failCollectionDomain(domainId: string): Promise<void> {
      await failDomain(dataSource, domainId);
    },
  };
}
