import { AnySchema, array, object, string } from 'yup';

/**
 * Response schemas: yup objects that document what a route answers. They are not used to validate
 * at run time; the OpenAPI document is built from them and the suite checks real answers against it.
 */

/** `{ data: <schema> }`, the body of every single-resource answer. */
export function dataOf(schema: AnySchema) {
  return object({ data: schema.defined() });
}

/** `{ data: [<item>], nextCursor }`, the body of every list answer. */
export function pageOf(item: AnySchema) {
  return object({ data: array(item).defined(), nextCursor: string().nullable().defined() });
}

/** A timestamp as the API writes it: an ISO 8601 string. */
export const timestamp = () => string().meta({ format: 'date-time' });
