import type { FastifyBaseLogger, FastifyInstance, FastifyTypeProvider, RawServerDefault } from 'fastify';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AnyObject, AnySchema, ISchema, InferType, ObjectSchema, ObjectShape, ValidationError, number, object, string } from 'yup';
import { FieldIssue, validationFailed } from '../../runtime/service-error';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../../db/pagination';
import { ISO_DATE_TIME, isCalendarDateTime } from '../../db/rules/date-time';

function joinPath(base: string | undefined, key: string): string {
  return base ? `${base}.${key}` : key;
}

/**
 * An object schema that refuses every property it does not name, reporting each one by path.
 * Bodies are validated in strict mode, so nothing is coerced ("10" is not an integer).
 */
export function strictObject<S extends ObjectShape>(shape: S) {
  return object(shape).test('no-unknown-properties', function check(value: AnyObject | undefined | null) {
    if (value === null || value === undefined || typeof value !== 'object') return true;
    const known = Object.keys(shape);
    const extra = Object.keys(value).filter((key) => !known.includes(key));
    if (extra.length === 0) return true;
    return new ValidationError(extra.map((key) =>
      this.createError({ path: joinPath(this.path, key), message: `${joinPath(this.path, key)} is not an allowed property` })));
  });
}

/**
 * A free-form object (for example a signal's `context`): any properties, but an object. Typed as a record (yup
 * would infer `{}`); `V` narrows its values where the caller's own test checks them.
 */
export function openObject<V = unknown>() {
  return object().meta({ open: true }) as ObjectSchema<Record<string, V>>;
}

/** An ISO 8601 date-time with a time zone, naming a day and time that exist (2026-02-30 is refused). */
export function isoDateTime() {
  return string().matches(ISO_DATE_TIME, 'must be an ISO 8601 date-time with a time zone')
    .test('calendar', 'must be a date and time that exist', (v) => v === undefined || v === null || isCalendarDateTime(v));
}

export const pageQuery = {
  limit: number().integer().min(1).max(MAX_PAGE_SIZE).default(DEFAULT_PAGE_SIZE),
  cursor: string().max(200),
};

function flatten(error: ValidationError): ValidationError[] {
  return error.inner.length > 0 ? error.inner.flatMap(flatten) : [error];
}

export function issuesOf(error: ValidationError): FieldIssue[] {
  return flatten(error).map((e) => ({ path: e.path ?? '', message: e.message }));
}

const quickAccepts = new WeakMap<object, (data: unknown) => boolean>();

/**
 * Gives `schema` a quick test of inputs it accepts as they are, which the validator tries before yup: the
 * public pages' path ids, checked by yup on every request, were a tenth of a 304's time. `accepts` must only
 * answer true for inputs yup accepts unchanged; anything else goes to yup, so every refusal stays yup's.
 */
export function withQuickAccept<S extends object>(schema: S, accepts: (data: unknown) => boolean): S {
  quickAccepts.set(schema, accepts);
  return schema;
}

/**
 * Fastify validator compiler for yup schemas. Bodies are checked strictly and passed on unchanged;
 * query strings and path parameters are cast to their declared types.
 */
export function yupValidatorCompiler({ schema, httpPart }: { schema: unknown; httpPart?: string }) {
  const yupSchema = schema as AnySchema;
  const strict = httpPart === 'body';
  const accepts = quickAccepts.get(yupSchema);
  return (data: unknown) => {
    if (accepts?.(data)) return { value: data };
    try {
      const value = yupSchema.validateSync(data, { strict, abortEarly: false });
      return { value: strict ? data : value };
    } catch (err) {
      if (err instanceof ValidationError) {
        const where = httpPart === 'querystring' ? 'query string' : httpPart === 'params' ? 'path' : 'body';
        return { error: validationFailed(issuesOf(err), `the ${where} does not match the schema`) };
      }
      throw err;
    }
  };
}

/**
 * A handler's `request.body`, `request.query` and `request.params` are the `InferType` of the very schemas its route
 * validates with, so a route states its input once. Answers stay untyped: response schemas only document them.
 */
export interface YupTypeProvider extends FastifyTypeProvider {
  readonly validator: this['schema'] extends ISchema<any, any> ? InferType<this['schema']> : unknown;
  readonly serializer: unknown;
}

/** What a route module registers on: the app whose request types come from the route's yup schemas. */
export type RouteApp = FastifyInstance<RawServerDefault, IncomingMessage, ServerResponse, FastifyBaseLogger, YupTypeProvider>;
