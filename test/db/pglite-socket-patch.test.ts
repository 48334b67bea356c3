// patches/@electric-sql+pglite-socket+0.2.17.patch: the embedded database's socket keeps the chunks of
// a message still incomplete aside and joins them once it is whole (joining each chunk to the buffer as it
// came copied a 13 MB batch INSERT some 200 times: 1.9 of a 3.9 s submission, docs/decisions.md §6).
// Statements of several megabytes, sent back to back with a small one, must reach PGlite whole and in order.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, openDatabase } from '../../src/db/connection.js';

let db: Database;

beforeAll(async () => {
  db = await openDatabase({ dataDir: 'memory://' });
});

afterAll(async () => {
  await db.close();
});

/** A text of `bytes` characters that differs from position to position (no run compresses away). */
function textOf(bytes: number, seed: number): string {
  let text = '';
  let state = seed;
  while (text.length < bytes) {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    text += state.toString(36);
  }
  return text.slice(0, bytes);
}

const md5 = (text: string) => createHash('md5').update(text).digest('hex');

describe('the embedded database socket', () => {
  it('is the patched build that the service loads (ESM and CommonJS)', () => {
    const require = createRequire(import.meta.url);
    const dist = path.dirname(require.resolve('@electric-sql/pglite-socket'));
    const esm = readFileSync(path.join(dist, 'index.js'), 'utf8');
    const chunk = /from"\.\/([\w-]+\.js)"/.exec(esm)?.[1];
    expect(chunk).toBeDefined();
    for (const file of [chunk!, 'index.cjs']) {
      expect(readFileSync(path.join(dist, file), 'utf8')).toContain('this.pendingChunks');
    }
  });

  it('gives statements of several megabytes to PGlite whole, in order, beside small ones', async () => {
    const texts = [textOf(6_000_000, 1), textOf(3_500_000, 2), textOf(100, 3), textOf(9_000_001, 4)];
    const answers = await Promise.all(
      texts.map(
        (text) =>
          db.sql<{ n: number; h: string }[]>`SELECT length(${text}::text) AS n, md5(${text}::text) AS h`,
      ),
    );
    expect(answers.map(([row]) => row)).toEqual(texts.map((text) => ({ n: text.length, h: md5(text) })));
  });
});
