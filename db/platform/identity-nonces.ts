import { DataSource } from 'typeorm';

/** Consumes a token nonce once per product; false when it was already used. */
export async function consumeNonce(ds: DataSource, productId: string, nonce: string, expiresAt: Date): Promise<boolean> {
  const rows: unknown[] = await ds.query(
    `INSERT INTO identity_nonces (product_id, nonce, expires_at) VALUES ($1, $2, $3)
     ON CONFLICT DO NOTHING RETURNING 1`,
    [productId, nonce, expiresAt],
  );
  return rows.length > 0;
}
