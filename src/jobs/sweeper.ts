// The hold sweeper (docs/decisions.md §2): a hold not delivered within HOLD_TTL of its job's end is
// released (the credits return) and its job becomes `expired`, so the result path answers 409
// reservation_expired. Test-key jobs have no hold; they expire on the same clock. Every worker runs it
// periodically; running it twice at once is harmless (the ledger decides each hold under its lock).
import type { Ledger } from '../billing/ledger.js';
import type { Sql } from '../db/connection.js';
import { expireJobs, expireTestJobsBefore, succeededLiveJobsBefore } from './job-store.js';

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
  ledger: Pick<Ledger, 'expireHolds' | 'releasedHoldIds'>;
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
    const cutoff = new Date(now.getTime() - deps.holdTtlSeconds * 1000);
    // Every succeeded live job whose hold has ended, whoever ended it: this sweep, an earlier one that
    // stopped before this step, or a settlement that found the hold past its end.
    const waiting = await succeededLiveJobsBefore(sql, cutoff);
    const ended = new Set(await ledger.releasedHoldIds(waiting.map((job) => job.reservationId)));
    const live = await expireJobs(
      sql,
      waiting.filter((job) => ended.has(job.reservationId)).map((job) => job.id),
    );
    const test = await expireTestJobsBefore(sql, cutoff);
    for (const chore of deps.chores ?? []) await chore(now);
    return { releasedHolds: released.map((hold) => hold.id), expiredJobs: [...live, ...test] };
  }

  return { sweep };
}
