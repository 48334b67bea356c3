// Commit hooks (src/db/commit-hooks.ts): run after COMMIT, in order, never for a transaction that rolled
// back; a hook that throws neither fails the committed transaction nor stops the hooks after it.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { afterCommit } from '../../src/db/commit-hooks.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => db.close());

describe('commit hooks', () => {
  it('run after the commit, in order, and a throwing one spoils neither the answer nor the rest', async () => {
    const ran: string[] = [];
    // The throwing hook is reported as a process warning (caught here, so the run's output stays clean).
    const warnings = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    const answer = await db.sql.begin(async (tx) => {
      afterCommit(tx, () => ran.push('first'));
      afterCommit(tx, () => {
        throw new Error('a listener broke');
      });
      afterCommit(tx, () => ran.push('third'));
      await tx`SELECT 1`;
      expect(ran).toEqual([]);
      return 'committed';
    });
    expect(answer).toBe('committed');
    expect(ran).toEqual(['first', 'third']);
    expect(warnings.mock.calls).toEqual([['a commit hook failed: Error: a listener broke']]);
    warnings.mockRestore();
  });

  it('do not run for a transaction that rolled back', async () => {
    const ran: string[] = [];
    await expect(
      db.sql.begin(async (tx) => {
        afterCommit(tx, () => ran.push('hook'));
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(ran).toEqual([]);
  });
});
