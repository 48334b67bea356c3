// Every change to a key or an organisation (revocation, suspension, plan) tells all processes to forget
// the keys they cached (key-cache.ts). The notification is delivered when the change commits.
import type { Sql, TransactionSql } from '../db/connection.js';

export const AUTH_CHANGED_CHANNEL = 'matchsim_auth_changed';

export async function notifyAuthChanged(db: Sql | TransactionSql, subjectId: string): Promise<void> {
  await db`SELECT pg_notify(${AUTH_CHANGED_CHANNEL}, ${subjectId})`;
}
