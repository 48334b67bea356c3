// The ledger's own checks: every account column must equal the sum of its ledger deltas.
import type { Sql } from '../db/connection.js';
import { readAccount } from './credit-accounts.js';
import type { LedgerDeps, LedgerEntry, LedgerSum } from './types.js';

export async function entries({ sql }: LedgerDeps, orgId: string): Promise<LedgerEntry[]> {
  return sql<LedgerEntry[]>`SELECT * FROM credit_ledger WHERE org_id = ${orgId} ORDER BY id`;
}

export async function ledgerSum({ sql }: LedgerDeps, orgId: string): Promise<LedgerSum> {
  const [row] = await sql<LedgerSum[]>`
    SELECT ${sumColumns(sql)}
    FROM credit_ledger l
    LEFT JOIN credit_accounts a ON a.org_id = l.org_id
    WHERE l.org_id = ${orgId}`;
  return row!;
}

export async function checkBalanced(deps: LedgerDeps, orgId: string) {
  const [row, ledger] = await Promise.all([readAccount(deps.sql, orgId), ledgerSum(deps, orgId)]);
  const account: LedgerSum = row
    ? {
        monthlyRemaining: row.monthlyRemaining,
        topupRemaining: row.topupRemaining,
        monthlyHeld: row.monthlyHeld,
        topupHeld: row.topupHeld,
        spentThisMonth: row.spentThisMonth,
      }
    : { monthlyRemaining: 0, topupRemaining: 0, monthlyHeld: 0, topupHeld: 0, spentThisMonth: 0 };
  const balanced = (Object.keys(account) as (keyof LedgerSum)[]).every((key) => account[key] === ledger[key]);
  return { balanced, account, ledger };
}

export async function findUnbalancedAccounts({ sql }: LedgerDeps): Promise<string[]> {
  const rows = await sql<{ orgId: string }[]>`
    SELECT a.org_id
    FROM credit_accounts a
    LEFT JOIN (
      SELECT l.org_id, ${sumColumns(sql)}
      FROM credit_ledger l JOIN credit_accounts a ON a.org_id = l.org_id
      GROUP BY l.org_id
    ) s ON s.org_id = a.org_id
    WHERE (a.monthly_remaining, a.topup_remaining, a.monthly_held, a.topup_held, a.spent_this_month)
      IS DISTINCT FROM (COALESCE(s.monthly_remaining, 0), COALESCE(s.topup_remaining, 0),
                        COALESCE(s.monthly_held, 0), COALESCE(s.topup_held, 0),
                        COALESCE(s.spent_this_month, 0))
    ORDER BY a.org_id`;
  return rows.map((row) => row.orgId);
}

// Sums over `credit_ledger l` joined to its `credit_accounts a` (for the current period).
function sumColumns(sql: Sql) {
  return sql`
    COALESCE(SUM(l.monthly_delta), 0)::bigint AS monthly_remaining,
    COALESCE(SUM(l.topup_delta), 0)::bigint AS topup_remaining,
    COALESCE(SUM(l.monthly_held_delta), 0)::bigint AS monthly_held,
    COALESCE(SUM(l.topup_held_delta), 0)::bigint AS topup_held,
    COALESCE(SUM(l.amount) FILTER (WHERE l.kind = 'charge' AND l.period_start = a.period_start), 0)::bigint
      AS spent_this_month`;
}
