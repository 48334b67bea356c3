// The one place PostgreSQL errors are translated: what is retried, what becomes an ApiError.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { classifyDatabaseError, inTransaction, MAX_TRANSACTION_ATTEMPTS } from '../../src/db/transactions.js';
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
