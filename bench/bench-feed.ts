// Fixtures for benchmarks: the demo world's teams on many more fixtures than the demo has, so that a
// benchmark's requests are cache misses. bench/http-server.ts ingests them in process; serve-bench writes
// them to a feed file for the CLI's `ingest` (docs/feed.md).
import { generateDemoFeed } from '../src/fixtures/demo-data.js';

/**
 * At least `count` fixtures on sale: the demo world's upcoming fixtures, copied under new ids with
 * kick-offs spread over the next four weeks (a benchmark needs many distinct fixtures; the copies keep
 * the demo's teams, ratings and squads).
 */
export function benchFeed(count: number, now: Date) {
  const feed = generateDemoFeed({ seed: 'matchsim-bench', now });
  const onSale = feed.fixtures.filter(
    (f) =>
      f.inputs &&
      f.state !== 'postponed' &&
      f.state !== 'cancelled' &&
      Date.parse(f.kickoff) > now.getTime() + 3_600_000,
  );
  const copies = [];
  for (let i = 0; copies.length + onSale.length < count; i++) {
    const source = onSale[i % onSale.length]!;
    const kickoff = new Date(now.getTime() + (2 + (i % (27 * 24))) * 3_600_000);
    copies.push({
      ...source,
      fixture_id: 900_000 + i,
      kickoff: kickoff.toISOString(),
      state: 'provisional' as const,
    });
  }
  feed.fixtures.push(...copies);
  return { feed, onSale: [...onSale, ...copies].map((f) => f.fixture_id) };
}
