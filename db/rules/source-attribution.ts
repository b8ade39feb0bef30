/**
 * A customer's name as their display mode allows: in full, the first name, or initials (each word's first
 * character, upper-cased, with a period, joined by `initialsSeparator`); anonymous shows none. Total: a name
 * of only whitespace, or any mode it does not know past these, never throws; an empty answer means no name.
 */
export function displayName(name: string, displayMode: string, initialsSeparator = ''): string {
  const words = name.split(/\s+/).filter((w) => w !== '');
  if (words.length === 0 || displayMode === 'anonymous') return '';
  if (displayMode === 'first_name') return words[0];
  // By code point, so a name starting with an emoji or a character outside the BMP keeps it whole.
  if (displayMode === 'initials') return words.map((w) => `${String.fromCodePoint(w.codePointAt(0)!).toUpperCase()}.`).join(initialsSeparator);
  return name;
}

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
    const shown = displayName(value, consent.displayMode);
    if (shown !== '') out.name = shown;
  }
  return out;
}
