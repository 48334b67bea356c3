// The job threads (src/engine/job-threads.ts): the host's share of a job done on worker threads gives
// the same document as on the calling thread; a fixture version is compiled once however many jobs ask;
// a thread shares a fixture version's calibration between its jobs whatever their lineups; the
// compile cache is bounded in bytes; its slots (src/engine/compiled-slots.ts) are reused only once
// no job uses them, and a compile into a used slot gives the bits of a compile into new memory; the
// in-play jobs of a match (a win-probability path's minutes) share one pre-match compile; every job of a
// fixture version shares its compile whatever its draws, seed, offered odds or data version.
import { afterAll, describe, expect, it } from 'vitest';
import { compileFixture, compileKey, matchTextOf } from '../../src/engine/compile.js';
import { pathStates } from '../../src/engine/compile-path.js';
import { createSlotPool } from '../../src/engine/compiled-slots.js';
import { documentWireText } from '../../src/engine/document-schema.js';
import { createJobThreads, type JobThreads } from '../../src/engine/job-threads.js';
import {
  compileShared,
  createJobScratch,
  type HostJob,
  preMatchJobOf,
  preMatchJobOfText,
} from '../../src/engine/job-work.js';
import { loadModelStatus } from '../../src/engine/model-status.js';
import { documentText } from '../../src/engine/stored-document.js';
import { type EngineSeed, minuteLabel, STEPS } from '../../src/engine-contract/layout.js';
import type { MatchInputs } from '../../src/engine-contract/match-inputs.js';
import { defaultModelParams } from '../../src/engine-contract/model-params.js';
import { plausibleFixture, withAnnouncedLineup } from './plausible-teams.js';

const setting = { params: defaultModelParams, modelStatus: loadModelStatus(defaultModelParams) };
const onThreads = createJobThreads({ setting, threads: 2 });
const here = createJobThreads({ setting, threads: 0 });
afterAll(async () => {
  await onThreads.close();
  await here.close();
});

function hostJob(n: number, draws = 2000): HostJob {
  const inputs = plausibleFixture(
    n,
    { teamId: 2 * n, attack: 0.1, defence: 0 },
    { teamId: 2 * n + 1, attack: 0, defence: 0.1 },
  );
  return hostJobOf(inputs, draws, { lo: n, hi: 0xabc });
}

function hostJobOf(
  inputs: MatchInputs,
  draws: number,
  seed: EngineSeed,
  payloadJson = JSON.stringify({ match: inputs, as_of: '2026-11-26T12:00:00.000Z' }),
): HostJob {
  return {
    key: compileKey(payloadJson, defaultModelParams),
    payloadJson,
    draws,
    seed,
    dataVersion: 'dv',
    queuedMs: 3,
  };
}

/** A document's wire text parsed, without its timing (run_ms and backend differ from run to run). */
function withoutTiming(documentJson: string) {
  const { timing: _timing, ...rest } = JSON.parse(documentJson) as Record<string, unknown>;
  return rest;
}

/** The job's compiled fixture; its slot stays the cache's (tests that do not care release at once). */
async function compiledOf(threads: JobThreads, job: HostJob) {
  const { compiled, release } = await threads.acquire(job);
  release();
  return compiled;
}

describe('job threads', () => {
  it('run a whole job to the same document as the calling thread, in the wire text of the schema', async () => {
    const job = hostJob(1);
    const threaded = await onThreads.whole(job, await compiledOf(onThreads, job));
    const inline = await here.whole(job, await compiledOf(here, job));
    expect(withoutTiming(documentText(threaded.document))).toEqual(
      withoutTiming(documentText(inline.document)),
    );
    expect(documentText(threaded.document)).toBe(
      documentWireText(JSON.parse(documentText(threaded.document))),
    );
    const result = JSON.parse(documentText(threaded.document)).result;
    expect(threaded.summary).toMatchObject({ homeWin: result.home_win, draw: result.draw });
  });

  it('finish a run counted elsewhere to the document of the whole job', async () => {
    const job = hostJob(2);
    const compiled = await compiledOf(onThreads, job);
    const whole = await onThreads.whole(job, compiled);
    const counted = await here.whole(job, await compiledOf(here, job));
    // The counters of the same draws, taken from a run on the calling thread, finished on a thread.
    const { simulateRange } = await import('../../fallback/engine.js');
    const { COUNTER_WORDS, finalizeCounters } = await import('../../src/engine-contract/layout.js');
    const counts = new Uint32Array(COUNTER_WORDS);
    simulateRange(compiled, job.seed, 0, job.draws, counts);
    finalizeCounters(counts);
    const finished = await onThreads.finish(job, compiled, counts, {
      engine: 'cpu',
      backend: 'elsewhere',
      runMs: 1,
    });
    expect(withoutTiming(documentText(finished.document))).toEqual(
      withoutTiming(documentText(whole.document)),
    );
    expect(withoutTiming(documentText(counted.document))).toEqual(
      withoutTiming(documentText(whole.document)),
    );
  });

  it('compile and run a whole job in one task when its fixture is new, to the document of compile then run', async () => {
    const job = hostJob(20);
    const before = onThreads.cacheStats();
    const fresh = await onThreads.acquireWhole(job);
    const again = await onThreads.acquireWhole({ ...job, draws: 3000 });
    try {
      expect(onThreads.cacheStats().misses - before.misses).toBe(1);
      expect(fresh.finished).not.toBeNull();
      // In the cache: the fixture is given, the job is left to `whole`.
      expect(again.finished).toBeNull();
      expect(again.compiled).toBe(fresh.compiled);
      const apart = await here.whole(job, await compiledOf(here, job));
      expect(withoutTiming(documentText(fresh.finished!.document))).toEqual(
        withoutTiming(documentText(apart.document)),
      );
      expect(fresh.finished!.summary).toEqual(apart.summary);
    } finally {
      fresh.release();
      again.release();
    }
    expect(onThreads.cacheStats().inUse).toBe(before.inUse);
  });

  it('compile a fixture version once however many jobs ask, on shared memory', async () => {
    const before = onThreads.cacheStats();
    const job = hostJob(3);
    const [a, b] = await Promise.all([
      compiledOf(onThreads, job),
      compiledOf(onThreads, { ...job, draws: 5000 }),
    ]);
    expect(a).toBe(b);
    expect(a.thresholds.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(a.eventTables.buffer).toBeInstanceOf(SharedArrayBuffer);
    const after = onThreads.cacheStats();
    expect(after.misses - before.misses).toBe(1);
    expect(after.hits - before.hits).toBe(1);
  });

  it('keep the compile cache within its bytes, least recently used first', async () => {
    const small = createJobThreads({ setting, threads: 0, cacheBytes: 2_000_000 });
    try {
      const jobs = [4, 5, 6].map((n) => hostJob(n));
      const first = await compiledOf(small, jobs[0]!);
      await compiledOf(small, jobs[1]!);
      await compiledOf(small, jobs[0]!);
      await compiledOf(small, jobs[2]!);
      const stats = small.cacheStats();
      expect(stats.bytes).toBeLessThanOrEqual(2_000_000);
      expect(stats).toMatchObject({ slots: 8, slotsFree: 6 });
      expect(stats.entries).toBe(2);
      // Job 0 was used after job 1: job 1 went, job 0 is still there.
      expect(await compiledOf(small, jobs[0]!)).toBe(first);
      expect(small.cacheStats().misses).toBe(3);
    } finally {
      await small.close();
    }
  });

  it('give a slot to another fixture only once the jobs using it released it', async () => {
    // Room for one fixture: each new one pushes the one before out of the cache.
    const one = createJobThreads({ setting, threads: 2, cacheBytes: 1 });
    try {
      const [first, second, third] = [7, 8, 9].map((n) => hostJob(n));
      const held = await one.acquire(first!);
      const kept = Uint32Array.from(held.compiled.eventTables);
      const keptFixture = Uint32Array.from(held.compiled.fixture);
      // Out of the cache but in use: the next compiles take other slots and leave its words alone.
      const next = await one.acquire(second!);
      next.release();
      (await one.acquire(third!)).release();
      expect(one.cacheStats()).toMatchObject({ entries: 1, slots: 8, slotsFree: 6 });
      expect(held.compiled.eventTables).toEqual(kept);
      expect(held.compiled.fixture).toEqual(keptFixture);
      held.release();
      held.release(); // a second release of the same use changes nothing
      expect(one.cacheStats()).toMatchObject({ entries: 1, slots: 8, slotsFree: 7 });
    } finally {
      await one.close();
    }
  });

  it('compile into a slot another fixture used to the bits of a compile into new memory', async () => {
    // Different squad sizes and ratings: what the first fixture left in the slot must not show through.
    const big = hostJob(10);
    const elevenInputs = plausibleFixture(
      11,
      { teamId: 22, attack: 0.1, defence: 0 },
      { teamId: 23, attack: 0, defence: 0.1 },
    );
    const small = hostJobOf(
      { ...elevenInputs, home: { ...elevenInputs.home, players: elevenInputs.home.players.slice(0, 16) } },
      2000,
      { lo: 11, hi: 0xabc },
    );
    const reused = createJobThreads({ setting, threads: 0, cacheBytes: 1 });
    const fresh = createJobThreads({ setting, threads: 0 });
    try {
      const first = await reused.acquire(big);
      first.release();
      // Another fixture pushes the first out of the cache; its slot is the next one taken.
      (await reused.acquire(hostJob(12))).release();
      const again = await reused.acquire(small);
      expect(again.compiled.fixture.buffer).toBe(first.compiled.fixture.buffer);
      expect(again.compiled.fixture.byteOffset).toBe(first.compiled.fixture.byteOffset);
      const clean = await fresh.acquire(small);
      expect(Array.from(again.compiled.fixture)).toEqual(Array.from(clean.compiled.fixture));
      expect(Array.from(again.compiled.thresholds)).toEqual(Array.from(clean.compiled.thresholds));
      expect(Array.from(again.compiled.eventTables)).toEqual(Array.from(clean.compiled.eventTables));
    } finally {
      await reused.close();
      await fresh.close();
    }
  });

  it("compile a match's in-play jobs from one pre-match compile, to the tables and documents of their own compiles", async () => {
    const fixture = plausibleFixture(
      40,
      { teamId: 80, attack: 0.1, defence: 0 },
      { teamId: 81, attack: 0, defence: 0.1 },
    );
    const inputs = { ...fixture, home: withAnnouncedLineup(fixture.home) };
    const [off, on] = [inputs.home.lineup.xi[3]!, inputs.home.lineup.bench[0]!];
    const states = [0, 30, 70, 104].map((step) => ({
      minute: minuteLabel(step),
      score: { home: step > 40 ? 1 : 0, away: 0 },
      ...(step > 60
        ? { substitutions: { home: [{ off, on }], away: [] }, booked: { home: [on], away: [] } }
        : {}),
    }));
    const jobs = states.map((from_state, i) =>
      hostJobOf({ ...inputs, from_state }, 2000, { lo: 40 + i, hi: 0xabc }),
    );
    const before = onThreads.cacheStats();
    const used = await Promise.all(jobs.map((job) => onThreads.acquire(job)));
    const whole = await onThreads.acquireWhole({ ...jobs[2]!, key: `${jobs[2]!.key} whole` });
    try {
      const after = onThreads.cacheStats();
      // One compile of the match before kick-off, and each state's own fixture table from it.
      expect(after.misses - before.misses).toBe(jobs.length + 2);
      expect(after.hits - before.hits).toBe(jobs.length);
      expect(after.inUse - before.inUse).toBe(jobs.length + 1);
      for (const [i, { compiled }] of used.entries()) {
        const own = compileFixture({ ...inputs, from_state: states[i]! }, defaultModelParams);
        expect(Array.from(compiled.fixture)).toEqual(Array.from(own.fixture));
        expect(Array.from(compiled.thresholds)).toEqual(Array.from(own.thresholds));
        expect(compiled.fixture.buffer).toBeInstanceOf(SharedArrayBuffer);
      }
      // Run whole in the task that made its tables, to the document of a job compiled on its own.
      const apart = await here.whole(
        jobs[2]!,
        compileShared({ ...inputs, from_state: states[2]! }, defaultModelParams, createSlotPool().take()),
      );
      expect(withoutTiming(documentText(whole.finished!.document))).toEqual(
        withoutTiming(documentText(apart.document)),
      );
    } finally {
      for (const use of used) use.release();
      whole.release();
    }
    expect(onThreads.cacheStats().inUse).toBe(before.inUse);
  });

  it("keep an in-play job's pre-match tables, out of the cache, until the job released them", async () => {
    const one = createJobThreads({ setting, threads: 2, cacheBytes: 1 });
    try {
      const fixture = plausibleFixture(
        41,
        { teamId: 82, attack: 0.1, defence: 0 },
        { teamId: 83, attack: 0, defence: 0.1 },
      );
      const job = hostJobOf({ ...fixture, from_state: { minute: '60', score: { home: 1, away: 0 } } }, 2000, {
        lo: 41,
        hi: 0xabc,
      });
      const held = await one.acquire(job);
      const kept = Uint32Array.from(held.compiled.eventTables);
      // Other fixtures push both entries out of the cache and take slots of their own.
      (await one.acquire(hostJob(42))).release();
      (await one.acquire(hostJob(43))).release();
      expect(one.cacheStats()).toMatchObject({ entries: 1, inUse: 1, slots: 8, slotsFree: 6 });
      expect(held.compiled.eventTables).toEqual(kept);
      held.release();
      expect(one.cacheStats()).toMatchObject({ entries: 1, inUse: 0, slots: 8, slotsFree: 7 });
    } finally {
      await one.close();
    }
  });

  it('compile a fixture version once for all its jobs, whatever their draws, seeds, offered odds or data version', async () => {
    const inputs = plausibleFixture(
      44,
      { teamId: 88, attack: 0.1, defence: 0 },
      { teamId: 89, attack: 0, defence: 0.1 },
    );
    // As the queue stores payloads (src/jobs/job-store.ts): the match, its as_of, any offered odds.
    const payloads = [
      { match: inputs, as_of: '2026-11-26T12:00:00.000Z' },
      { match: inputs, as_of: '2026-11-27T08:30:00.000Z' },
      { match: inputs, as_of: '2026-11-26T12:00:00.000Z', offered_odds: { home: 2.1, draw: 3.4 } },
    ].map((payload) => JSON.stringify(payload));
    for (const payload of payloads) expect(matchTextOf(payload)).toBe(JSON.stringify(inputs));
    const jobs = payloads.map((payload, i) =>
      hostJobOf(inputs, 1000 * (i + 1), { lo: 44 + i, hi: 0xabc }, payload),
    );
    expect(new Set(jobs.map((job) => job.key)).size).toBe(1);
    const before = onThreads.cacheStats();
    const compiled = await Promise.all(jobs.map((job) => compiledOf(onThreads, job)));
    expect(onThreads.cacheStats().compiles - before.compiles).toBe(1);
    expect(new Set(compiled).size).toBe(1);
    // A payload laid out otherwise, or with a member the compile does not know, is keyed by its whole
    // text: a compile of its own, to the same tables.
    const otherwise = [
      JSON.stringify({ as_of: '2026-11-26T12:00:00.000Z', match: inputs }),
      JSON.stringify({ match: inputs, as_of: '2026-11-26T12:00:00.000Z', request: { as_of: 'x' } }),
    ];
    for (const payload of otherwise) {
      expect(matchTextOf(payload)).toBeNull();
      const job = hostJobOf(inputs, 1000, { lo: 44, hi: 0xabc }, payload);
      expect(job.key).not.toBe(jobs[0]!.key);
      const own = await compiledOf(here, job);
      expect(Array.from(own.thresholds)).toEqual(Array.from(compiled[0]!.thresholds));
      expect(Array.from(own.fixture)).toEqual(Array.from(compiled[0]!.fixture));
    }
  });

  it("compile a path's minutes from one compile of the match, shared with its pre-match jobs", async () => {
    const fixture = plausibleFixture(
      45,
      { teamId: 90, attack: 0.1, defence: 0 },
      { teamId: 91, attack: 0, defence: 0.1 },
    );
    const inputs = { ...fixture, home: withAnnouncedLineup(fixture.home) };
    const states = pathStates([], [], STEPS - 1);
    const jobs = states.map((from_state, step) =>
      hostJobOf({ ...inputs, from_state }, 1000, { lo: step, hi: 0xabc }),
    );
    const preMatch = hostJobOf(
      inputs,
      5000,
      { lo: 45, hi: 0xabc },
      JSON.stringify({ match: inputs, as_of: '2026-11-26T12:00:00.000Z', offered_odds: { home: 1.9 } }),
    );
    const threads = createJobThreads({ setting, threads: 2 });
    try {
      const used = await Promise.all([...jobs, preMatch].map((job) => threads.acquire(job)));
      // One compile, into the one slot taken: the minutes took none, not even for a while.
      expect(threads.cacheStats()).toMatchObject({
        compiles: 1,
        fromPreMatch: jobs.length,
        slots: 8,
        slotsFree: 7,
      });
      const shared = used.at(-1)!.compiled;
      for (const step of [0, 45, 60, STEPS - 1]) {
        const { compiled } = used[step]!;
        // The same words of shared memory: a word changed in the pre-match tables shows in the minute's.
        for (const table of ['thresholds', 'eventTables'] as const) {
          const word = compiled[table][0]!;
          shared[table][0] = word ^ 1;
          expect(compiled[table][0]).toBe(word ^ 1);
          shared[table][0] = word;
        }
        const own = compileFixture({ ...inputs, from_state: states[step]! }, defaultModelParams);
        expect(Array.from(compiled.fixture)).toEqual(Array.from(own.fixture));
        expect(Array.from(compiled.thresholds)).toEqual(Array.from(own.thresholds));
      }
      for (const use of used) use.release();
      expect(threads.cacheStats().inUse).toBe(0);
    } finally {
      await threads.close();
    }
  });

  it("key an in-play job's pre-match job as a pre-match job of the same inputs, from its text or its parse", () => {
    const inputs = plausibleFixture(
      46,
      { teamId: 92, attack: 0.1, defence: 0 },
      { teamId: 93, attack: 0, defence: 0.1 },
    );
    const from_state = {
      minute: '60',
      score: { home: 1, away: 0 },
      booked: { home: [inputs.home.players[2]!.player_id], away: [] },
    };
    const seed = { lo: 46, hi: 0xabc };
    const preMatchKey = hostJobOf(inputs, 1000, seed).key;
    // The state last, as submissions write it: the event loop reads its pre-match job from the text.
    const last = hostJobOf({ ...inputs, from_state }, 1000, seed);
    // The state first: only a thread's parse finds it.
    const first = hostJobOf({ from_state, ...inputs }, 1000, seed);
    expect(preMatchJobOfText(setting, last)?.key).toBe(preMatchKey);
    expect(preMatchJobOfText(setting, first)).toBeNull();
    for (const job of [last, first]) {
      const found = preMatchJobOf(setting, job);
      expect(found?.key).toBe(preMatchKey);
      expect(JSON.parse(found!.payloadJson).match).toEqual(inputs);
    }
    expect(JSON.parse(preMatchJobOfText(setting, last)!.payloadJson).match).toEqual(inputs);
    for (const find of [preMatchJobOf, preMatchJobOfText]) {
      expect(find(setting, hostJobOf(inputs, 1000, seed))).toBeNull();
    }
  });

  it("give a fitted run's compile the fit the domain asked for, on any thread, to the bits of its own fit", async () => {
    const fixture = plausibleFixture(
      47,
      { teamId: 94, attack: 0.2, defence: 0 },
      { teamId: 95, attack: 0, defence: 0.1 },
    );
    const match = {
      ...fixture,
      market: {
        odds: { '1x2': [2, 3.4, 4] as [number, number, number] },
        margin_method: 'shin' as const,
        fit: 'exact' as const,
        targets: { home_win: 0.47, draw: 0.28, away_win: 0.25 },
      },
    };
    const before = onThreads.cacheStats();
    const fit = await onThreads.fitMarket(match);
    // The run as submitted (its match the text the domain fitted) and a minute of it in play.
    const preMatch = hostJobOf(match, 1000, { lo: 47, hi: 0xabc });
    const inPlay = hostJobOf({ ...match, from_state: { minute: '30', score: { home: 0, away: 0 } } }, 1000, {
      lo: 48,
      hi: 0xabc,
    });
    const used = await Promise.all([inPlay, preMatch].map((job) => onThreads.acquire(job)));
    try {
      const after = onThreads.cacheStats();
      expect(after.compiles - before.compiles).toBe(1);
      expect(after.fitsGiven - before.fitsGiven).toBe(1);
      const own = compileFixture(match, defaultModelParams);
      expect(own.marketFit).toEqual(fit);
      for (const { compiled } of used) {
        expect(compiled.marketFit).toEqual(fit);
        expect(Array.from(compiled.thresholds)).toEqual(Array.from(own.thresholds));
      }
      expect(Array.from(used[1]!.compiled.fixture)).toEqual(Array.from(own.fixture));
    } finally {
      for (const use of used) use.release();
    }
  });

  it('share the calibration of a fixture version between its lineups, to the bits of a compile of their own', () => {
    const scratch = createJobScratch();
    const slots = createSlotPool();
    const predicted = plausibleFixture(
      30,
      { teamId: 60, attack: 0.2, defence: -0.1 },
      { teamId: 61, attack: -0.1, defence: 0.05 },
    );
    const announced = { ...predicted, home: withAnnouncedLineup(predicted.home) };
    compileShared(predicted, defaultModelParams, slots.take(), scratch);
    const shared = compileShared(announced, defaultModelParams, slots.take(), scratch);
    expect(scratch.calibrations).toMatchObject({ hits: 1, misses: 1 });
    const own = compileShared(announced, defaultModelParams, slots.take());
    expect(Array.from(shared.fixture)).toEqual(Array.from(own.fixture));
    expect(Array.from(shared.thresholds)).toEqual(Array.from(own.thresholds));
    expect(Array.from(shared.eventTables)).toEqual(Array.from(own.eventTables));
    // Other ratings, or the same ones under a competition's own card and shot rates: calibrations of their own.
    const stronger = { ...predicted, home: { ...predicted.home, attack: 0.3 } };
    compileShared(stronger, defaultModelParams, slots.take(), scratch);
    const profiled = {
      ...predicted,
      profile: {
        yellow_per_match: { home: 2.5, away: 2.5 },
        straight_red_per_match: { home: 0.1, away: 0.1 },
        shots: { conversion: 0.1, on_target_share: 0.35 },
      },
    };
    const withProfile = compileShared(profiled, defaultModelParams, slots.take(), scratch);
    expect(scratch.calibrations).toMatchObject({ hits: 1, misses: 3 });
    const profiledOwn = compileShared(profiled, defaultModelParams, slots.take());
    expect(Array.from(withProfile.thresholds)).toEqual(Array.from(profiledOwn.thresholds));
  });
});
