import { string } from 'yup';
import { strictObject, withQuickAccept } from './validation';

const ID_MAX = 100;

/** An id in a path or body: opaque, but never longer than any id this service issues. */
export const idString = () => string().required().max(ID_MAX);

/** Exactly `names`, each a string of 1 to ID_MAX characters: what the schema below accepts unchanged. */
const areIds = (names: string[]) => (data: unknown): boolean => {
  if (typeof data !== 'object' || data === null || Object.keys(data).length !== names.length) return false;
  return names.every((name) => {
    const value = (data as Record<string, unknown>)[name];
    return typeof value === 'string' && value.length > 0 && value.length <= ID_MAX;
  });
};

/** Path parameters that are all ids, e.g. `pathParams('id', 'itemId')` for `/:id/items/:itemId`. */
export function pathParams<K extends string>(...names: K[]) {
  const schema = strictObject(Object.fromEntries(names.map((name) => [name, idString()])) as Record<K, ReturnType<typeof idString>>);
  return withQuickAccept(schema, areIds(names));
}

export const idParams = pathParams('id');
