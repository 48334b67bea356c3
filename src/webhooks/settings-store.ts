// Every statement on webhook_settings: the balance below which a charge sends credits.low.
import type { Sql, TransactionSql } from '../db/connection.js';

type Db = Sql | TransactionSql;

/** The organisation's credits.low threshold in milli-credits; null when it has set none. */
export async function creditsLowThreshold(db: Db, orgId: string): Promise<number | null> {
  const [row] = await db<{ creditsLowThresholdMilli: string | number | null }[]>`
    SELECT credits_low_threshold_milli FROM webhook_settings WHERE org_id = ${orgId}`;
  return row?.creditsLowThresholdMilli == null ? null : Number(row.creditsLowThresholdMilli);
}

export async function setCreditsLowThreshold(
  db: Db,
  orgId: string,
  milli: number | null,
  now: Date,
): Promise<void> {
  await db`
    INSERT INTO webhook_settings (org_id, credits_low_threshold_milli, updated_at)
    VALUES (${orgId}, ${milli}, ${now})
    ON CONFLICT (org_id) DO UPDATE SET credits_low_threshold_milli = ${milli}, updated_at = ${now}`;
}
