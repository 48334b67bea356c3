// Counting the statements a transaction sends (the set-based stores and deliveries promise a number that
// does not grow with their items: docs/decisions.md §6).
import type { Sql, TransactionSql } from '../../src/db/connection.js';

/**
 * A tagged template that is a statement: not a fragment spliced into one (a column list), nor a helper
 * call such as `tx(rows)` for a VALUES list.
 */
export function isStatement(strings: unknown): boolean {
  return Array.isArray(strings) && /^\s*(SELECT|INSERT|UPDATE|DELETE|WITH)\b/i.test(String(strings[0]));
}

/** `tx` (a transaction or a connection) counting each statement sent through it in `counted.statements`. */
export function countingStatements<T extends Sql | TransactionSql>(
  tx: T,
  counted: { statements: number },
): T {
  return new Proxy(tx, {
    apply(target, thisArg, args) {
      if (isStatement(args[0])) counted.statements++;
      return Reflect.apply(target, thisArg, args);
    },
  });
}

/**
 * `tx` that sends each statement as usual and records the plan of each whose text matches `pattern`
 * (an EXPLAIN of it first, with the same parameters): what the planner picks for the statements a
 * function really sends, on the data as it is.
 */
export function recordingPlans(tx: TransactionSql, pattern: RegExp, plans: string[]): TransactionSql {
  return new Proxy(tx, {
    apply(target, thisArg, [strings, ...args]) {
      if (!isStatement(strings) || !pattern.test((strings as string[]).join('$'))) {
        return Reflect.apply(target, thisArg, [strings, ...args]);
      }
      const explained = [`EXPLAIN ${(strings as string[])[0]}`, ...(strings as string[]).slice(1)];
      const explain = Reflect.apply(target, thisArg, [Object.assign(explained, { raw: explained }), ...args]);
      return (explain as Promise<Array<{ 'QUERY PLAN': string }>>).then((rows) => {
        plans.push(rows.map((row) => row['QUERY PLAN']).join('\n'));
        return Reflect.apply(target, thisArg, [strings, ...args]);
      });
    },
  });
}

/**
 * `tx` counting, in `counted.roundTrips`, the round trips of the statements sent through it from the
 * first whose text matches `from` on: a statement sent while none is awaiting its answer starts one, and
 * those sent while one is (pipelined behind it, patches/postgres+3.4.9.patch) share it.
 */
export function countingRoundTrips(
  tx: TransactionSql,
  from: RegExp,
  counted: { roundTrips: number },
): TransactionSql {
  let counting = false;
  let inFlight = 0;
  return new Proxy(tx, {
    apply(target, thisArg, args) {
      const sent = Reflect.apply(target, thisArg, args);
      if (!isStatement(args[0])) return sent;
      counting ||= from.test((args[0] as string[]).join('$'));
      if (!counting) return sent;
      if (inFlight === 0) counted.roundTrips++;
      inFlight++;
      (sent as Promise<unknown>).then(
        () => inFlight--,
        () => inFlight--,
      );
      return sent;
    },
  });
}
