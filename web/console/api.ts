import { createServiceClient } from '../../clients/typescript/src/service-client';
import type { components } from '../../clients/typescript/src/schema';

export type Schemas = components['schemas'];
export type Session = Schemas['WorkspaceSession'];

/** The typed client on this origin: the session cookie goes by itself, writes carry the session's CSRF token. */
export function consoleClient(csrfToken?: string) {
  return createServiceClient({
    baseUrl: location.origin,
    credentials: 'same-origin',
    headers: csrfToken ? { 'x-csrf-token': csrfToken } : {},
  });
}

export type ConsoleClient = ReturnType<typeof consoleClient>;

/** The error envelope's code and message, whatever the answer was (`{error:{code,message}}`, or `{error, code}` under /api/proof). */
export function refusal(error: unknown, status: number): { code: string; message: string; status: number } {
  const body = error as { error?: { code?: string; message?: string } | string; code?: string } | undefined;
  if (typeof body?.error === 'string') return { code: body.code ?? String(status), message: body.error, status };
  const e = body?.error;
  return { code: e?.code ?? String(status), message: e?.message ?? 'no answer', status };
}
