import { DataSource } from 'typeorm';
import { SealedSecretError, needsResealing, openSecret, sealSecret } from '../../runtime/secret-box';

const SEALED_COLUMNS = [
  { table: 'webhook_endpoints', column: 'secret' },
  { table: 'products', column: 'identity_secret' },
  { table: 'proof_signing_keys', column: 'private_key_pem' },
  { table: 'proof_stripe_connections', column: 'signing_secret' },
] as const;

/**
 * Seals every stored secret that is still plaintext (rows from before sealing) or sealed under a key
 * that no longer seals (after a rotation). Each role runs it at start; a row changed meanwhile by
 * another process is left to it. A value this ring cannot open is left as it is and named by its key
 * id, so that the role still starts and the routes that need it answer 503.
 */
export async function resealStoredSecrets(ds: DataSource): Promise<number> {
  let changed = 0;
  for (const { table, column } of SEALED_COLUMNS) {
    const rows: Array<{ id: string; value: string }> = await ds.query(`SELECT id, ${column} AS value FROM ${table} WHERE ${column} IS NOT NULL`);
    for (const row of rows.filter((r) => needsResealing(r.value))) {
      let plain: string;
      try {
        plain = openSecret(row.value);
      } catch (err) {
        if (!(err instanceof SealedSecretError)) throw err;
        console.warn(`[sv] ${table}.${column} ${row.id}: ${err.message}`);
        continue;
      }
      const [, count]: [unknown, number] = await ds.query(
        `UPDATE ${table} SET ${column} = $2 WHERE id = $1 AND ${column} = $3`, [row.id, sealSecret(plain), row.value],
      );
      changed += count;
    }
  }
  return changed;
}
