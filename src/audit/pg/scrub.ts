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
      // sealed_for names the subject while the ciphertext is there (migrations/004), so only
      // the subject's rows are read, and a scrubbed row is not counted twice.
      `UPDATE hookbus_records
          SET record = (record::jsonb #- '{encrypted,ct}' #- '{encrypted,iv}' #- '{encrypted,tag}')::json,
              sealed_for = NULL
        WHERE ns = $1 AND sealed_for = $2`,
      [namespace, subjectHash],
    );
    return result.rowCount ?? 0;
  } catch (error) {
    throw indexError(error, "cannot scrub the erased subject's index rows");
  }
}

/**
 * The session keys of the index rows still sealed for a subject (a user id an agent named):
 * read before they are scrubbed, so that erasing the subject can erase its sessions too. At most
 * `max`; one more tells the caller there are more than it may erase in one go.
 */
export async function sessionsSealedFor(
  pool: PgPool,
  namespace: string,
  subjectHash: string,
  max: number,
): Promise<string[]> {
  try {
    const result = await pool.query<{ session_key: string }>(
      `SELECT DISTINCT session_key FROM hookbus_records
        WHERE ns = $1 AND sealed_for = $2 ORDER BY session_key LIMIT $3`,
      [namespace, subjectHash, max + 1],
    );
    return result.rows.map((row) => row.session_key);
  } catch (error) {
    throw indexError(error, "cannot read the sessions of the erased subject");
  }
}
