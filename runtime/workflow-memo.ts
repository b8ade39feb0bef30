import { Client } from '@temporalio/client';
import { SearchAttributePair, SearchAttributeType, defineSearchAttributeKey } from '@temporalio/common';

/** Memo every tenant workflow carries, so operators can tell in the Temporal UI whose it is. */
export function tenantMemo(organizationId: string, productId: string | null): Record<string, string | null> {
  return { organizationId, productId };
}

/**
 * Search attributes (Keyword) that let operators list and filter workflows by tenant:
 * `temporal workflow list --query "OrganizationId='org_...'"`, and the same query in the Web UI.
 * The dev server registers them at start; a real cluster once with
 * `temporal operator search-attribute create --name OrganizationId --type Keyword` (and ProductId).
 */
export const ORGANIZATION_ID = defineSearchAttributeKey('OrganizationId', SearchAttributeType.KEYWORD);
export const PRODUCT_ID = defineSearchAttributeKey('ProductId', SearchAttributeType.KEYWORD);
export const TENANT_SEARCH_ATTRIBUTES = [ORGANIZATION_ID, PRODUCT_ID];

/** What every tenant workflow start sets: the memo and the tenant search attributes. */
export function tenantStartOptions(organizationId: string, productId: string | null) {
  const typedSearchAttributes: SearchAttributePair[] = [{ key: ORGANIZATION_ID, value: organizationId }];
  if (productId !== null) typedSearchAttributes.push({ key: PRODUCT_ID, value: productId });
  return { memo: tenantMemo(organizationId, productId), typedSearchAttributes };
}

const GRPC_ALREADY_EXISTS = 6;

/**
 * Registers the tenant search attributes on the namespace when they are missing (the operator
 * service; a cluster whose visibility store refuses this needs the CLI command above instead).
 */
export async function ensureTenantSearchAttributes(client: Client, namespace: string): Promise<void> {
  const { customAttributes } = await client.connection.operatorService.listSearchAttributes({ namespace });
  const known = new Set(Object.keys(customAttributes ?? {}));
  const missing = TENANT_SEARCH_ATTRIBUTES.filter((key) => !known.has(key.name));
  if (missing.length === 0) return;
  try {
    await client.connection.operatorService.addSearchAttributes({
      namespace,
      // INDEXED_VALUE_TYPE_KEYWORD
      searchAttributes: Object.fromEntries(missing.map((key) => [key.name, 2])),
    });
  } catch (err) {
    if ((err as { code?: number }).code !== GRPC_ALREADY_EXISTS) throw err;
  }
}
