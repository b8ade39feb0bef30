import { string } from 'yup';
import { strictObject } from './validation';

/** An id in a path or body: opaque, but never longer than any id this service issues. */
export const idString = () => string().required().max(100);

/** Path parameters that are all ids, e.g. `pathParams('id', 'itemId')` for `/:id/items/:itemId`. */
export function pathParams<K extends string>(...names: K[]) {
  return strictObject(Object.fromEntries(names.map((name) => [name, idString()])) as Record<K, ReturnType<typeof idString>>);
}

export const idParams = pathParams('id');
