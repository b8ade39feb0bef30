import { DataSource } from 'typeorm';
import { notFound } from '../../runtime/service-error';
import { Teammate, TeammateSession } from '../entities';
import { TeammateRole } from '../entities/teammate';
import { newId } from '../rules/ids';
import { newSecret, sha256Hex } from '../rules/secrets';

export const SESSION_COOKIE = 'sv_session';
export const SESSION_TOKEN_PATTERN = /^svs_[A-Za-z0-9_-]{43}$/;

export interface IssuedSession {
  cookie: string;
  csrfToken: string;
  expiresAt: string;
}

/** Signs a teammate in: the cookie value and the CSRF token are shown this once. */
export async function createSession(ds: DataSource, teammateId: string, ttlHours: number): Promise<IssuedSession> {
  const teammate = await ds.getRepository(Teammate).findOneBy({ id: teammateId });
  if (!teammate) throw notFound('teammate');
  const token = newSecret('svs');
  const csrfToken = newSecret('csrf').slice('csrf_'.length);
  const expiresAt = new Date(Date.now() + ttlHours * 3_600_000);
  await ds.getRepository(TeammateSession).insert({
    id: newId('ses'), teammateId, tokenDigest: sha256Hex(token), csrfToken, expiresAt, revokedAt: null,
  });
  return { cookie: `${SESSION_COOKIE}=${token}`, csrfToken, expiresAt: expiresAt.toISOString() };
}

export interface SessionPrincipal {
  sessionId: string;
  teammateId: string;
  organizationId: string;
  role: TeammateRole;
  email: string;
  csrfToken: string;
}

/** The live session a cookie token names, or null when unknown, expired or revoked. */
export async function lookupSession(ds: DataSource, token: string): Promise<SessionPrincipal | null> {
  const rows: Array<Record<string, string>> = await ds.query(
    `SELECT s.id, s.csrf_token, t.id AS teammate_id, t.organization_id, t.role, t.email
       FROM teammate_sessions s JOIN teammates t ON t.id = s.teammate_id
      WHERE s.token_digest = $1 AND s.revoked_at IS NULL AND s.expires_at > now()`,
    [sha256Hex(token)],
  );
  const row = rows[0];
  if (!row) return null;
  return {
    sessionId: row.id,
    teammateId: row.teammate_id,
    organizationId: row.organization_id,
    role: row.role as TeammateRole,
    email: row.email,
    csrfToken: row.csrf_token,
  };
}
