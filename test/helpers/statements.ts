// Counting the statements a transaction sends (the set-based stores and deliveries promise a number that
// does not grow with their items: docs/decisions.md §6).
import type { TransactionSql } from '../../src/db/connection.js';

/**
 * A tagged template that is a statement: not a fragment spliced into one (a column list), nor a helper
 * call such as `tx(rows)` for a VALUES list.
 */
export function isStatement(strings: unknown): boolean {
  return Array.isArray(strings) && /^\s*(SELECT|INSERT|UPDATE|DELETE|WITH)\b/i.test(String(strings[0]));
}

/** `tx` counting each statement sent through it in `counted.statements`. */
export function countingStatements(tx: TransactionSql, counted: { statements: number }): TransactionSql {
  return new Proxy(tx, {
    apply(target, thisArg, args) {
      if (isStatement(args[0])) counted.statements++;
      return Reflect.apply(target, thisArg, args);
    },
  });
}
