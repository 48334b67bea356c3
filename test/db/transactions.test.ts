// The one place PostgreSQL errors are translated: what is retried, what becomes an ApiError.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  classifyDatabaseError,
  DATABASE_RETRY_AFTER_SECONDS,
  databaseRead,
  databaseWrite,
  inTransaction,
  MAX_TRANSACTION_ATTEMPTS,
  translateDatabaseError,
} from '../../src/db/transactions.js';
import { ApiError } from '../../src/errors.js';
import { createTestDatabase, type TestDatabase, usingServer } from '../helpers/database.js';

describe('classifyDatabaseError', () => {
  it('retries serialization failures and deadlocks, reports lost connections, leaves the rest', () => {
    expect(classifyDatabaseError({ code: '40001' })).toBe('retry');
    expect(classifyDatabaseError({ code: '40P01' })).toBe('retry');
    expect(classifyDatabaseError({ code: '57P01' })).toBe('connection_lost');
    expect(classifyDatabaseError({ code: '08006' })).toBe('connection_lost');
    expect(classifyDatabaseError({ code: 'CONNECTION_CLOSED' })).toBe('connection_lost');
    expect(classifyDatabaseError({ code: 'ECONNRESET' })).toBe('connection_lost');
    expect(classifyDatabaseError({ code: '23505' })).toBe('other');
    expect(classifyDatabaseError(new Error('plain'))).toBe('other');
    expect(classifyDatabaseError(null)).toBe('other');
  });

  it('reports timeouts and exhausted resources as unavailable, unstorable values as invalid', () => {
    for (const code of ['57014', '55P03', '53300', '53200'])
      expect(classifyDatabaseError({ code })).toBe('unavailable');
    for (const code of ['22021', '22P05', '22008', '22003'])
      expect(classifyDatabaseError({ code })).toBe('invalid_value');
    // Division by zero is the service's own arithmetic, not a request's value.
    expect(classifyDatabaseError({ code: '22012' })).toBe('other');
    // An error code of the service is never a database failure.
    expect(classifyDatabaseError(new ApiError('parameter_invalid'))).toBe('other');
  });
});

describe('translateDatabaseError', () => {
  it('makes transient failures 503s with retry advice and leaves everything else alone', () => {
    const lost = translateDatabaseError({ code: '57P01' }, 'settlement_unknown') as ApiError;
    expect(lost).toBeInstanceOf(ApiError);
    expect(lost.code).toBe('settlement_unknown');
    expect(lost.options.retryAfterSeconds).toBe(DATABASE_RETRY_AFTER_SECONDS);
    for (const code of ['40001', '57014', 'CONNECTION_CLOSED']) {
      const error = translateDatabaseError({ code }) as ApiError;
      expect(error.code, code).toBe('dependency_unavailable');
      expect(error.status).toBe(503);
    }
    const other = { code: '23505' };
    expect(translateDatabaseError(other)).toBe(other);
  });
});

describe('databaseRead and databaseWrite', () => {
  const failing = (codes: string[]) => {
    let calls = 0;
    const work = async () => {
      const code = codes[calls++];
      if (code) throw Object.assign(new Error(code), { code });
      return 'rows';
    };
    return { work, calls: () => calls };
  };

  it('a read runs once more after a transient failure, then answers 503', async () => {
    const once = failing(['CONNECTION_CLOSED']);
    expect(await databaseRead(once.work)).toBe('rows');
    expect(once.calls()).toBe(2);
    const twice = failing(['57P01', 'ECONNREFUSED']);
    const error = await databaseRead(twice.work).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'dependency_unavailable' });
    expect(twice.calls()).toBe(2);
  });

  it('a read is not repeated for an error that would repeat, nor a write ever', async () => {
    const constraint = failing(['23505']);
    expect(await databaseRead(constraint.work).catch((caught: unknown) => caught)).toMatchObject({
      code: '23505',
    });
    expect(constraint.calls()).toBe(1);
    const write = failing(['CONNECTION_CLOSED']);
    const error = await databaseWrite(write.work, { onConnectionLost: 'settlement_unknown' }).catch(
      (caught: unknown) => caught,
    );
    expect(error).toMatchObject({ code: 'settlement_unknown' });
    expect(write.calls()).toBe(1);
  });
});

describe('inTransaction', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase({ max: 4 });
    await db.sql`CREATE TABLE deadlock_probe (id int PRIMARY KEY, touched int NOT NULL DEFAULT 0)`;
    await db.sql`INSERT INTO deadlock_probe (id) VALUES (1), (2)`;
  });

  afterAll(async () => {
    await db.close();
  });

  it('passes other errors through unchanged and rolls back', async () => {
    const error = await inTransaction(db.sql, { onConnectionLost: 'settlement_unknown' }, async (tx) => {
      await tx`UPDATE deadlock_probe SET touched = touched + 100 WHERE id = 1`;
      await tx`SELECT 1 / 0`;
    }).catch((caught: unknown) => caught);
    expect(error).not.toBeInstanceOf(ApiError);
    expect((error as { code: string }).code).toBe('22012');
    const [row] = await db.sql<{ touched: number }[]>`SELECT touched FROM deadlock_probe WHERE id = 1`;
    expect(row!.touched).toBe(0);
  });

  it.skipIf(!usingServer)(
    'runs a read-only transaction again after its connection is terminated',
    async () => {
      let attempts = 0;
      const rows = await inTransaction(db.sql, { readOnly: true }, async (tx) => {
        attempts++;
        if (attempts === 1) await tx`SELECT pg_terminate_backend(pg_backend_pid())`;
        return tx<{ id: number }[]>`SELECT id FROM deadlock_probe ORDER BY id`;
      });
      expect(attempts).toBe(2);
      expect(rows.map((row) => row.id)).toEqual([1, 2]);
    },
  );

  it.skipIf(!usingServer)(
    'a plain read after a terminated connection is answered by the next one',
    async () => {
      let attempts = 0;
      const rows = await databaseRead(async () => {
        attempts++;
        if (attempts === 1) await db.sql`SELECT pg_terminate_backend(pg_backend_pid())`;
        return db.sql<{ id: number }[]>`SELECT id FROM deadlock_probe ORDER BY id`;
      });
      expect(attempts).toBe(2);
      expect(rows).toHaveLength(2);
    },
  );

  it.skipIf(!usingServer)('a write transaction whose connection is lost is not run again', async () => {
    let attempts = 0;
    const error = await inTransaction(db.sql, {}, async (tx) => {
      attempts++;
      await tx`UPDATE deadlock_probe SET touched = touched + 1000 WHERE id = 1`;
      await tx`SELECT pg_terminate_backend(pg_backend_pid())`;
    }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'dependency_unavailable' });
    expect(attempts).toBe(1);
    const [row] = await db.sql<{ touched: number }[]>`SELECT touched FROM deadlock_probe WHERE id = 1`;
    expect(row!.touched).toBe(0);
  });

  it.skipIf(!usingServer)('runs a transaction again after a real deadlock', async () => {
    let attempts = 0;
    let bothLocked!: () => void;
    let firstLocked = 0;
    const barrier = new Promise<void>((resolve) => {
      bothLocked = resolve;
    });
    // Two transactions lock the two rows in opposite orders: PostgreSQL kills one with 40P01.
    const lockInOrder = (first: number, second: number) =>
      inTransaction(db.sql, { onConnectionLost: 'settlement_unknown' }, async (tx) => {
        attempts++;
        await tx`UPDATE deadlock_probe SET touched = touched + 1 WHERE id = ${first}`;
        if (++firstLocked === 2) bothLocked();
        await barrier;
        await tx`UPDATE deadlock_probe SET touched = touched + 1 WHERE id = ${second}`;
      });
    await Promise.all([lockInOrder(1, 2), lockInOrder(2, 1)]);
    expect(attempts).toBe(3);
    expect(attempts).toBeLessThanOrEqual(MAX_TRANSACTION_ATTEMPTS);
    const rows = await db.sql<{ touched: number }[]>`SELECT touched FROM deadlock_probe ORDER BY id`;
    expect(rows.map((row) => row.touched)).toEqual([2, 2]);
  });
});
