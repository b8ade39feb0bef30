import { array, number, string } from 'yup';
import { ServiceError } from '../../runtime/service-error';
import { idString } from '../plugins/path-params';
import { openObject, strictObject } from '../plugins/validation';

/** ProofContent: no properties beyond the spec's six, at any level the spec names. */
export const proofContentSchema = strictObject({
  text: string().min(1).max(20_000),
  title: string().min(1).max(300),
  rating: number().min(0).max(5),
  mediaAssetIds: array(idString()).max(20),
  attribution: openObject<string>().test('string-values', 'attribution values must be strings of at most 300 characters',
    (value) => value == null || Object.values(value).every((v) => typeof v === 'string' && v.length <= 300))
    // A display mode shows a name as given, by its first word or by initials: a name needs a word.
    .test('name', 'attribution.name must not be empty or only spaces', (value?: Record<string, unknown>) =>
      value?.name === undefined || /\S/.test(String(value.name))),
  answers: openObject(),
}).test('not-empty', 'content needs text, a title or media', (value) =>
  value == null || Boolean(value.text || value.title || value.mediaAssetIds?.length)).required();

/** A query parameter that may be repeated or comma-separated, as one flat list. */
export function listParam(value: unknown): string[] {
  if (value === undefined) return [];
  return (Array.isArray(value) ? value : [value]).flatMap((v) => String(v).split(',')).map((v) => v.trim());
}

/** Values from a closed set; anything else is a 400 naming the allowed values in `details`. */
export function closedList<T extends string>(name: string, raw: unknown, allowed: readonly T[], opts: { max?: number; unique?: boolean } = {}): T[] {
  const values = listParam(raw);
  const issues: Array<{ path: string; message: string; allowed: readonly T[] }> = [];
  const fail = (message: string) => issues.push({ path: name, message: `${message}; allowed values: ${allowed.join(', ')}`, allowed });
  for (const v of values) if (!allowed.includes(v as T)) fail(`"${v}" is not a known value`);
  if (opts.unique && new Set(values).size !== values.length) fail('a value is repeated');
  if (opts.max !== undefined && values.length > opts.max) fail(`at most ${opts.max} values`);
  if (issues.length > 0) throw new ServiceError('VALIDATION_FAILED', `the query parameter ${name} is not valid`, issues);
  return [...new Set(values)] as T[];
}
