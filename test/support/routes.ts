import type { paths } from '../../clients/typescript/src/schema';

/** The `{name}` placeholders of a path template, each a string. */
type PathParams<P extends string> = P extends `${string}{${infer K}}${infer Rest}` ? Record<K, string> & PathParams<Rest> : unknown;

/**
 * A URL from a route of the generated client (`paths`), its placeholders filled as given: a test's URL
 * helper written with it stops compiling when the route is renamed or removed, and names every
 * placeholder the route has. Values go in as they are, as the hand-built URLs did.
 */
export function route<P extends keyof paths & string>(template: P, params: PathParams<P>, query = ''): string {
  const values = params as Record<string, string>;
  return template.replace(/\{(\w+)\}/g, (_, name: string) => values[name]) + query;
}
