// Concurrency of the simulations API against one organisation: holds never overdraw, an idempotent
// request retried in parallel makes one job and one charge. Meaningful on a PostgreSQL server (CI);
// on PGlite nothing contends, and the same assertions hold.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FX } from '../fixtures/small-feed.js';
import { createFeedTestContext, type TestContext } from '../helpers/app.js';

let t: TestContext;
beforeAll(async () => {
  t = await createFeedTestContext({ worker: true });
});
afterAll(async () => t.close());

const roomy = { simulations_rpm: 10_000, concurrent_simulations: 10_000, submissions_per_day: 10_000 };

async function deliverAll(auth: Record<string, string>, resultUrls: string[]) {
  const bodies = [];
  for (const url of resultUrls) {
    for (let i = 0; ; i++) {
      const poll = await t.app.inject({ method: 'GET', url, headers: auth });
      if (poll.statusCode === 200) {
        bodies.push(poll.json());
        break;
      }
      expect(poll.statusCode, poll.body).toBe(202);
      if (i > 400) throw new Error(`${url} never finished`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }
  return bodies;
}

describe('concurrent submissions', () => {
  it('charges exactly the 37 of 100 parallel requests the balance covers; the rest get 402', async () => {
    const { auth, orgId } = await t.newOrg({ plan: 'plus', limits: roomy });
    // 100 credits; each run of 2,700 draws costs 2.7 credits: 37 fit (99.9 credits).
    const fixtures = [FX.upcoming, FX.unlabelled];
    const lineups = [undefined, { home: { source: 'auto' } }, { away: { source: 'predicted' } }];
    const bodies = Array.from({ length: 100 }, (_, i) => ({
      fixture_id: fixtures[i % 2],
      draws: 2700,
      // Distinct bodies (the loop guard refuses 8 identical ones in 10 s); the same price.
      wait_seconds: i % 26,
      ...(lineups[Math.floor(i / 26) % 3] ? { lineups: lineups[Math.floor(i / 26) % 3] } : {}),
    }));
    const responses = await Promise.all(
      bodies.map((payload) =>
        t.app.inject({ method: 'POST', url: '/v1/simulations', headers: auth, payload }),
      ),
    );
    const statuses = responses.map((r) => r.statusCode);
    const odd = responses.filter((r) => ![200, 202, 402].includes(r.statusCode));
    expect(odd.map((r) => r.body)).toEqual([]);
    const accepted = responses.filter((r) => r.statusCode === 200 || r.statusCode === 202);
    expect(accepted).toHaveLength(37);
    expect(statuses.filter((s) => s === 402)).toHaveLength(63);
    for (const refused of responses.filter((r) => r.statusCode === 402)) {
      expect(refused.json().error.code).toBe('balance_too_low');
    }
    const queued = accepted.filter((r) => r.statusCode === 202).map((r) => r.json().result_url as string);
    const delivered = [
      ...accepted.filter((r) => r.statusCode === 200).map((r) => r.json()),
      ...(await deliverAll(auth, queued)),
    ];
    expect(delivered.reduce((sum, body) => sum + body.credits_charged, 0)).toBeCloseTo(99.9, 9);
    const balance = await t.services.ledger.balance(orgId);
    expect(balance).toMatchObject({ held: 0, spentThisMonth: 99_900, available: 100 });
    expect((await t.services.ledger.checkBalanced(orgId)).balanced).toBe(true);
    const charges = (await t.services.ledger.entries(orgId)).filter((e) => e.kind === 'charge');
    expect(charges).toHaveLength(37);
  });

  it('makes one job and one charge of the same request retried in parallel with one Idempotency-Key', async () => {
    const { auth, orgId } = await t.newOrg({ limits: roomy });
    const payload = { fixture_id: FX.upcoming, draws: 4321, wait_seconds: 5 };
    const responses = await Promise.all(
      Array.from({ length: 6 }, () =>
        t.app.inject({
          method: 'POST',
          url: '/v1/simulations',
          headers: { ...auth, 'idempotency-key': 'same-key' },
          payload,
        }),
      ),
    );
    const winners = responses.filter((r) => r.statusCode === 200 || r.statusCode === 202);
    const conflicts = responses.filter((r) => r.statusCode === 409);
    expect(winners.length + conflicts.length).toBe(6);
    for (const conflict of conflicts) {
      expect(conflict.json().error).toMatchObject({
        code: 'idempotency_conflict',
        retry: { idempotency_key: 'same', retryable: true },
      });
    }
    // Retrying after the first finished replays it byte for byte.
    const first = winners[0]!;
    const replay = await t.app.inject({
      method: 'POST',
      url: '/v1/simulations',
      headers: { ...auth, 'idempotency-key': 'same-key' },
      payload,
    });
    expect(replay.body).toBe(first.body);
    const jobs = await t.db.sql`SELECT id FROM jobs WHERE org_id = ${orgId}`;
    expect(jobs).toHaveLength(1);
    if (first.statusCode === 202) await deliverAll(auth, [first.json().result_url]);
    const charges = (await t.services.ledger.entries(orgId)).filter((e) => e.kind === 'charge');
    expect(charges).toHaveLength(1);
    expect(charges[0]!.amount).toBe(4321);
    expect((await t.services.ledger.checkBalanced(orgId)).balanced).toBe(true);
  });
});
