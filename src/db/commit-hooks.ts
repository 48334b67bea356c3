// Work to do once a transaction has committed, in this process: waking the worker that should claim a job
// just queued, or the requests waiting for a job just finished (src/jobs/waits.ts). A PostgreSQL server
// delivers the same news to every process by NOTIFY on commit; PGlite cannot carry notifications across
// its socket (docs/ARCHITECTURE.md), so without these hooks its worker and waiters would only poll.
// A hook runs after COMMIT has been answered, never for a transaction that rolled back or failed.
import type postgres from 'postgres';

// connection.ts's Sql and TransactionSql, named here without importing it (it imports this file).
type Sql = postgres.Sql;
type TransactionSql = postgres.TransactionSql;

const hooksOf = new WeakMap<object, Array<() => void>>();

/**
 * Runs `hook` once `tx` has committed. A transaction begun on a client that `withCommitHooks` did not
 * wrap (a test's own client) runs no hook: its work then reaches other processes by NOTIFY or polling.
 */
export function afterCommit(tx: TransactionSql, hook: () => void): void {
  hooksOf.get(tx)?.push(hook);
}

/** Makes `sql.begin` run the hooks its transaction registered, after COMMIT; returns `sql`. */
export function withCommitHooks(sql: Sql): Sql {
  const begin = sql.begin.bind(sql) as (...args: unknown[]) => Promise<unknown>;
  const wrapped = async (...args: unknown[]) => {
    const work = args.pop() as (tx: TransactionSql) => unknown;
    const hooks: Array<() => void> = [];
    const result = await begin(...args, (tx: TransactionSql) => {
      hooksOf.set(tx, hooks);
      return work(tx);
    });
    // The transaction has committed: a hook that throws must not make it look failed to its caller (a
    // settled charge answered as an error), nor keep the hooks after it from running.
    for (const hook of hooks) {
      try {
        hook();
      } catch (error) {
        process.emitWarning(`a commit hook failed: ${String(error)}`);
      }
    }
    return result;
  };
  sql.begin = wrapped as Sql['begin'];
  return sql;
}
