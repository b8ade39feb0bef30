/**
 * The attribution a source record may show: only the identity fields the customer consented to,
 * with the display mode applied to the name (first name, initials, or none for anonymous).
 */
export function consentedAttribution(
  attribution: Record<string, string> | undefined, consent: { displayMode: string; identityFields: string[] },
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const field of consent.identityFields) {
    const value = attribution?.[field];
    if (typeof value !== 'string' || value === '') continue;
    if (field !== 'name') {
      out[field] = value;
      continue;
    }
    const words = value.trim().split(/\s+/);
    if (consent.displayMode === 'full_name') out.name = value;
    else if (consent.displayMode === 'first_name') out.name = words[0];
    else if (consent.displayMode === 'initials') out.name = words.map((w) => `${w[0].toUpperCase()}.`).join('');
  }
  return out;
}
