// A statement that fails after the server sent some of its rows must leave nothing of them to the next
// statement on the same connection (porsager/postgres#1119, #1181; the fix is in
// patches/postgres+3.4.9.patch, docs/ARCHITECTURE.md "The patched driver"). One connection, statements
// pipelined behind each other, on whichever back end the tests run.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase({ max: 1 });
});

afterAll(async () => {
  await db.close();
});

describe('a statement that fails part-way through its rows', () => {
  it('leaves the next statement on the connection exactly its own rows', async () => {
    // 1/(3-g): rows for g = 1 and 2 reach the client, then g = 3 divides by zero.
    const failing = db.sql<{ share: number }[]>`SELECT 1 / (3 - g) AS share FROM generate_series(1, 5) g`;
    const next = db.sql<{ n: number }[]>`SELECT g AS n FROM generate_series(1, 4) g`;
    const after = db.sql<{ word: string }[]>`SELECT 'after' AS word`;
    const [failed, answered, last] = await Promise.allSettled([failing, next, after]);

    expect(failed.status).toBe('rejected');
    expect(failed.status === 'rejected' && failed.reason).toMatchObject({ code: '22012' });
    if (answered.status !== 'fulfilled') throw answered.reason;
    const rows = answered.value;
    expect(rows.length).toBe(4);
    expect(rows.count).toBe(4);
    expect([...rows]).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }]);
    expect(last.status === 'fulfilled' && [...last.value]).toEqual([{ word: 'after' }]);
  });

  it('leaves the next statement its own rows when awaited one after the other', async () => {
    await expect(db.sql`SELECT 1 / (3 - g) AS share FROM generate_series(1, 5) g`).rejects.toMatchObject({
      code: '22012',
    });
    const rows = await db.sql<{ n: number }[]>`SELECT g AS n FROM generate_series(1, 3) g`;
    expect([...rows]).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
  });
});
