// Shared set-up of the billing tests: organisations straight into the table the lead's code owns, and a
// clock the test moves by hand.
import type { Plan } from '../../src/accounts/orgs.js';
import type { Sql } from '../../src/db/connection.js';
import { newId } from '../../src/ids.js';

export async function insertOrg(
  sql: Sql,
  options: { plan?: Plan; spendCapMilli?: number | null; planActive?: boolean } = {},
): Promise<string> {
  const id = newId('org');
  await sql`
    INSERT INTO orgs (id, name, plan, plan_active, spend_cap_milli)
    VALUES (${id}, ${`test ${id}`}, ${options.plan ?? 'plus'}, ${options.planActive ?? true},
            ${options.spendCapMilli ?? null})`;
  return id;
}

export interface ManualClock {
  (): Date;
  set(at: Date | string): void;
  advance(milliseconds: number): void;
}

export function manualClock(start: Date | string): ManualClock {
  let now = new Date(start);
  const clock = (() => new Date(now)) as ManualClock;
  clock.set = (at) => {
    now = new Date(at);
  };
  clock.advance = (milliseconds) => {
    now = new Date(now.getTime() + milliseconds);
  };
  return clock;
}

export const HOUR_MS = 3_600_000;
