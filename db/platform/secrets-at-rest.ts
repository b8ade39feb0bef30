import { DataSource } from 'typeorm';
import { needsResealing, openSecret, sealSecret } from '../../runtime/secret-box';

const SEALED_COLUMNS = [
  { table: 'webhook_endpoints', column: 'secret' },
  { table: 'products', column: 'identity_secret' },
  { table: 'proof_signing_keys', column: 'private_key_pem' },
  { table: 'proof_stripe_connections', column: 'signing_secret' },
] as const;

/**
 * Seals every stored secret that is still plaintext (rows from before sealing) or sealed under a key
 * that no longer seals (after a rotation). Each role runs it at start; a row changed meanwhile by
 * another process is left to it.
 */
export async function resealStoredSecrets(ds: DataSource): Promise<number> {
  let changed = 0;
  for (const { table, column } of SEALED_COLUMNS) {
    const rows: Array<{ id: string; value: string }> = await ds.query(`SELECT id, ${column} AS value FROM ${table} WHERE ${column} IS NOT NULL`);
    for (const row of rows.filter((r) => needsResealing(r.value))) {
      const [, count]: [unknown, number] = await ds.query(
        `UPDATE ${table} SET ${column} = $2 WHERE id = $1 AND ${column} = $3`, [row.id, sealSecret(openSecret(row.value)), row.value],
      );
      changed += count;
    }
  }
  return changed;
}
