import { DataSource } from 'typeorm';
import { ServiceError, invalidCredential, notFound } from '../../runtime/service-error';
import { newId } from '../rules/ids';
import { newSecret, sha256Hex } from '../rules/secrets';
import { enqueueWorkflowCommand } from '../workflow-commands';

/** A console sign-in link's secret, carried in the URL fragment and sent back in `x-sign-in-token`. */
export const SIGN_IN_TOKEN_PATTERN = /^sl_[A-Za-z0-9_-]{43}$/;
/** A link works once, for 15 minutes (PAGES.md §5). */
export const SIGN_IN_LINK_TTL_MS = 15 * 60_000;

const signInUrl = (consoleUrl: string, token: string) => `${consoleUrl}/sign-in#${token}`;

/**
 * Asks for a sign-in link for every teammate with this address (one per workspace they belong to). Nothing
 * tells the caller whether any matched: the mail goes out through a workflow, which mints the secret itself.
 */
export async function requestSignInLinks(ds: DataSource, email: string): Promise<void> {
  await ds.transaction(async (em) => {
    const teammates: Array<{ id: string; organization_id: string }> = await em.query(
      'SELECT id, organization_id FROM teammates WHERE lower(email) = lower($1)', [email]);
    for (const t of teammates) {
      const linkId = newId('sli');
      await em.query(
        `INSERT INTO teammate_sign_in_links (id, teammate_id, expires_at) VALUES ($1, $2, now() + $3 * interval '1 millisecond')`,
        [linkId, t.id, SIGN_IN_LINK_TTL_MS]);
      await enqueueWorkflowCommand(em, {
        type: 'platform.sign_in_link.deliver', tenant: { organizationId: t.organization_id, productId: null }, linkId,
      });
    }
  });
}

export interface MintedSignInLink { email: string; url: string; expiresAt: string }

/**
 * Gives a requested link its secret (a new one each call, so a retried mail carries a working link and any
 * earlier one stops); null once the link was used or has expired.
 */
export async function mintSignInLink(ds: DataSource, linkId: string, consoleUrl: string): Promise<MintedSignInLink | null> {
  const token = newSecret('sl');
  const [rows]: [Array<{ email: string; expires_at: Date }>, number] = await ds.query(
    `UPDATE teammate_sign_in_links l SET token_digest = $2 FROM teammates t
      WHERE l.id = $1 AND t.id = l.teammate_id AND l.used_at IS NULL AND l.expires_at > now()
      RETURNING t.email, l.expires_at`, [linkId, sha256Hex(token)]);
  const row = rows[0];
  return row ? { email: row.email, url: signInUrl(consoleUrl, token), expiresAt: row.expires_at.toISOString() } : null;
}

/** A link for a teammate without e-mail (`sv teammate sign-in-link`): shown this once. */
export async function issueSignInLink(ds: DataSource, teammateId: string, consoleUrl: string): Promise<MintedSignInLink> {
  const [teammate]: Array<{ id: string }> = await ds.query('SELECT id FROM teammates WHERE id = $1', [teammateId]);
  if (!teammate) throw notFound('teammate');
  const linkId = newId('sli');
  await ds.query(
    `INSERT INTO teammate_sign_in_links (id, teammate_id, expires_at) VALUES ($1, $2, now() + $3 * interval '1 millisecond')`,
    [linkId, teammateId, SIGN_IN_LINK_TTL_MS]);
  return (await mintSignInLink(ds, linkId, consoleUrl))!;
}

export interface SignInTeammate { id: string; organizationId: string; email: string; role: 'owner' | 'admin' | 'member' }

/** Uses a link up (one statement: two tabs racing get one session); answers its teammate. */
export async function redeemSignInLink(ds: DataSource, token: string): Promise<SignInTeammate> {
  if (!SIGN_IN_TOKEN_PATTERN.test(token)) throw invalidCredential('the sign-in link is malformed');
  const digest = sha256Hex(token);
  const [[used]]: [SignInTeammate[], number] = await ds.query(
    `UPDATE teammate_sign_in_links l SET used_at = now() FROM teammates t
      WHERE l.token_digest = $1 AND l.used_at IS NULL AND l.expires_at > now() AND t.id = l.teammate_id
      RETURNING t.id, t.organization_id AS "organizationId", t.email, t.role`, [digest]);
  if (used) return used;
  const [known]: Array<{ used_at: Date | null }> = await ds.query(
    'SELECT used_at FROM teammate_sign_in_links WHERE token_digest = $1', [digest]);
  if (!known) throw invalidCredential('the sign-in link is not recognised; ask for a new one');
  if (known.used_at) throw new ServiceError('ALREADY_USED', 'this sign-in link was already used; ask for a new one');
  throw new ServiceError('EXPIRED', 'this sign-in link has expired; ask for a new one');
}

/** Signs a session out; the cookie stops at once. */
export async function revokeSession(ds: DataSource, sessionId: string): Promise<void> {
  await ds.query('UPDATE teammate_sessions SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL', [sessionId]);
}
