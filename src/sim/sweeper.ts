// The hold sweeper (decisions 2): a hold not delivered within HOLD_TTL of its job's end is released
// (the credits return) and its job becomes `expired`, so the result path answers 409
// reservation_expired. Test-key jobs have no hold; they expire on the same clock. Every worker runs it
// periodically; running it twice at once is harmless (the ledger decides each hold under its lock).
import type { Ledger } from '../billing/ledger.js';
import type { Sql } from '../db/connection.js';

export interface SweepOutcome {
  /** Holds the ledger released in this sweep. */
  releasedHolds: string[];
  /** Jobs marked expired in this sweep (live and test). */
  expiredJobs: string[];
}

export interface HoldSweeper {
  sweep(now?: Date): Promise<SweepOutcome>;
}

export interface HoldSweeperDeps {
  sql: Sql;
  ledger: Ledger;
  clock?: () => Date;
  holdTtlSeconds: number;
  /** Other periodic clean-ups to run with each sweep (e.g. purging old idempotency records). */
  chores?: ReadonlyArray<(now: Date) => Promise<unknown>> | undefined;
}

export function makeHoldSweeper(deps: HoldSweeperDeps): HoldSweeper {
  const { sql, ledger } = deps;
  const clock = deps.clock ?? (() => new Date());

  async function sweep(now: Date = clock()): Promise<SweepOutcome> {
    const released = await ledger.expireHolds(now);
    // Every succeeded live job whose hold has ended, whoever ended it: this sweep, an earlier one that
    // stopped before this step, or a settlement that found the hold past its end.
    const live = await sql<{ id: string }[]>`
      UPDATE jobs j SET status = 'expired'
      FROM credit_holds h
      WHERE j.status = 'succeeded' AND j.mode = 'live' AND h.id = j.reservation_id AND h.status = 'released'
      RETURNING j.id`;
    const testCutoff = new Date(now.getTime() - deps.holdTtlSeconds * 1000);
    const test = await sql<{ id: string }[]>`
      UPDATE jobs SET status = 'expired'
      WHERE status = 'succeeded' AND mode = 'test' AND finished_at <= ${testCutoff}
      RETURNING id`;
    for (const chore of deps.chores ?? []) await chore(now);
    return {
      releasedHolds: released.map((hold) => hold.id),
      expiredJobs: [...live, ...test].map((row) => row.id),
    };
  }

  return { sweep };
}
