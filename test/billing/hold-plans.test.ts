// Statements that address holds by id read them by id: never the partial index of every pending hold
// (credit_holds_pending_expiry, for the expiry sweep). With `status = 'pending'` beside the ids, the
// planner ANDed that index with the primary key, so every job's completion and every delivery read an
// index that grows with the pending holds (and with their dead entries until a vacuum): ~8 ms a
// statement at 90,000 entries, found in the server's plans (docs/decisions.md §6).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeLedger } from '../../src/billing/ledger.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { recordingPlans } from '../helpers/statements.js';
import { insertOrg, manualClock } from './fixtures.js';

let db: TestDatabase;
const clock = manualClock('2026-03-15T12:00:00Z');
let ledger: ReturnType<typeof makeLedger>;

beforeAll(async () => {
  db = await createTestDatabase();
  ledger = makeLedger({ sql: db.sql, clock });
});

afterAll(async () => {
  await db.close();
});

describe('hold statements by id', () => {
  it('use the primary key, not the index of pending holds, for expiry and settlement', async () => {
    const orgId = await insertOrg(db.sql, { plan: 'pro' });
    const holds = await ledger.reserveMany(
      orgId,
      Array.from({ length: 12 }, (_, i) => ({ holdId: `res_plans_${i}`, milli: 100 })),
      { requestId: 'req_plans' },
    );
    const ids = holds.map((hold) => hold.id);
    // A table whose statistics say few holds are pending: the case in which the planner took that index.
    await db.sql`
      INSERT INTO credit_holds (id, org_id, amount, monthly_part, topup_part, period_start, status, created_at,
                                settled_at, request_id)
      SELECT 'res_filler_' || n, ${orgId}, 100, 100, 0, ${clock()}, 'settled', ${clock()}, ${clock()}, 'req'
      FROM generate_series(1, 3000) AS n`;
    await db.sql`ANALYZE credit_holds`;

    const plans: string[] = [];
    await db.sql.begin(async (tx) => {
      const recording = recordingPlans(tx, /UPDATE credit_holds/, plans);
      await ledger.setHoldsExpiry(ids, new Date(clock().getTime() + 3_600_000), { tx: recording });
      const settled = await ledger.settleMany(orgId, ids.slice(0, 6), {
        requestId: 'req_plans',
        tx: recording,
      });
      expect([...settled.values()].filter((outcome) => outcome !== 'expired')).toHaveLength(6);
    });
    expect(plans).toHaveLength(2);
    for (const plan of plans) {
      expect(plan).toMatch(/credit_holds_pkey/);
      expect(plan).not.toMatch(/credit_holds_pending_expiry/);
    }
    // What the statements did: six holds settled, the other six pending with their new end.
    const rows = await db.sql<{ status: string; expiresAt: Date | null }[]>`
      SELECT status, expires_at FROM credit_holds WHERE id = ANY(${ids}) ORDER BY status`;
    expect(rows.map((row) => row.status)).toEqual([...Array(6).fill('pending'), ...Array(6).fill('settled')]);
    expect(rows.every((row) => row.expiresAt?.getTime() === clock().getTime() + 3_600_000)).toBe(true);
  });
});
