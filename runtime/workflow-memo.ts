/** Memo every tenant workflow carries, so operators can tell in the Temporal UI whose it is. */
export function tenantMemo(organizationId: string, productId: string | null): Record<string, string | null> {
  return { organizationId, productId };
}
