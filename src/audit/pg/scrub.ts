/**
 * Scrubbing the index after an erasure (docs/privacy.md): the rows of records sealed under the
 * erased subject keep their clear fields and lose the ciphertext, so the index holds nothing the
 * key could have opened, even if the key turned up again.
 */
import { indexError, type PgPool } from "./pool.js";

export async function scrubErasedRows(
  pool: PgPool,
  namespace: string,
  subjectHash: string,
): Promise<number> {
  try {
    const result = await pool.query(
      `UPDATE hookbus_records
          SET record = record #- '{encrypted,ct}' #- '{encrypted,iv}' #- '{encrypted,tag}'
        WHERE ns = $1
          AND record -> 'encrypted' ->> 'subject' = $2
          AND record -> 'encrypted' ? 'ct'`,
      [namespace, subjectHash],
    );
    return result.rowCount ?? 0;
  } catch (error) {
    throw indexError(error, "cannot scrub the erased subject's index rows");
  }
}
