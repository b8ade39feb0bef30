import createFetchClient, { type ClientOptions } from 'openapi-fetch';
import type { paths } from './schema';

// No Node module here: the console bundles this file for the browser (index.ts adds the webhook helper).

export interface ServiceClientOptions extends Omit<ClientOptions, 'baseUrl'> {
  /** Where the service listens, e.g. `https://feedback.example.com` or `http://127.0.0.1:3000`. */
  baseUrl: string;
  /** A service key (`svk_...`) or a signed end-user token, sent as `Authorization: Bearer ...`. */
  credential?: string;
}

/**
 * A typed client of the whole API: paths, parameters, bodies and every documented answer are
 * checked by the compiler. Calls answer `{ data, error, response }`; `error` is the error envelope.
 */
export function createServiceClient({ baseUrl, credential, headers, ...rest }: ServiceClientOptions) {
  return createFetchClient<paths>({
    baseUrl,
    headers: { ...(credential ? { authorization: `Bearer ${credential}` } : {}), ...(headers as Record<string, string> | undefined) },
    ...rest,
  });
}

export type ServiceClient = ReturnType<typeof createServiceClient>;
