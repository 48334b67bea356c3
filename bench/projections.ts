// Season projections (issue 28): 10,000 seasons of a 20-club league from round 1 (380 fixtures to play;
// goal 10 s on two cores) and from round 30 (100 to play; goal 1 s), through the projection's own
// thread (season-runner.ts, thread start included), each beside a plain reference measured in the same
// run: the same seasons written the obvious way (Math.random, Knuth's Poisson, a table of objects sorted
// by points, goal difference and goals). A third row gives the sampler's rate in fixture-draws per second.
import { performance } from 'node:perf_hooks';
import { makeRandom } from '../src/fixtures/seeded-random.js';
import { runSeasonsOnThread } from '../src/projections/season-runner.js';
import type { PlayedFixture, RemainingFixture, SeasonInput } from '../src/projections/season-sampler.js';
import type { BenchRow } from './report.js';

const GROUP = 'season projections';
const CLUBS = 20;
const SEASONS = 10_000;
/** Rated goals of an average home and away side (docs/model.md's reference figures: 1.58 and 1.22). */
const HOME_GOALS = 1.58;
const AWAY_GOALS = 1.22;

/** A double round robin of 20 clubs with ratings spread as a top league's (sd 0.25 on the log scale). */
function league(playedRounds: number): SeasonInput {
  const random = makeRandom('bench-league');
  const attack = Array.from({ length: CLUBS }, () => random.normal(0, 0.25));
  const defence = Array.from({ length: CLUBS }, () => random.normal(0, 0.25));
  const fixtures: RemainingFixture[] = [];
  for (let round = 0; round < 2 * (CLUBS - 1); round++) {
    for (let i = 0; i < CLUBS / 2; i++) {
      // The circle method: every pair once per half season, home and away swapped in the second half.
      const a = i === 0 ? 0 : ((round + i - 1) % (CLUBS - 1)) + 1;
      const b = ((round + CLUBS - 1 - i - 1) % (CLUBS - 1)) + 1;
      const [home, away] = round < CLUBS - 1 ? [a, b] : [b, a];
      fixtures.push({
        home,
        away,
        homeExpectedGoals: HOME_GOALS * Math.exp(attack[home]! - defence[away]!),
        awayExpectedGoals: AWAY_GOALS * Math.exp(attack[away]! - defence[home]!),
      });
    }
  }
  const playedCount = playedRounds * (CLUBS / 2);
  const played: PlayedFixture[] = fixtures.slice(0, playedCount).map((f) => ({
    home: f.home,
    away: f.away,
    homeGoals: random.poisson(f.homeExpectedGoals),
    awayGoals: random.poisson(f.awayExpectedGoals),
  }));
  return {
    clubs: CLUBS,
    played,
    remaining: fixtures.slice(playedCount),
    rules: { win: 3, draw: 1, tieBreakers: ['goal_difference', 'goals_for', 'head_to_head'] },
    strengthSd: 0.1,
  };
}

function knuthPoisson(mean: number): number {
  const limit = Math.exp(-mean);
  let k = 0;
  let product = Math.random();
  while (product > limit) {
    k++;
    product *= Math.random();
  }
  return k;
}

/** The reference: each season as a table of objects, sorted by points, goal difference, goals. */
function referenceSeasons(input: SeasonInput, seasons: number): number {
  let champions = 0;
  for (let s = 0; s < seasons; s++) {
    const table = Array.from({ length: input.clubs }, (_, club) => ({ club, points: 0, gf: 0, ga: 0 }));
    const strength = table.map(() =>
      Math.exp(
        input.strengthSd *
          Math.sqrt(-2 * Math.log(1 - Math.random())) *
          Math.cos(2 * Math.PI * Math.random()),
      ),
    );
    const play = (f: { home: number; away: number }, hg: number, ag: number) => {
      const home = table[f.home]!;
      const away = table[f.away]!;
      home.gf += hg;
      home.ga += ag;
      away.gf += ag;
      away.ga += hg;
      home.points += hg > ag ? 3 : hg === ag ? 1 : 0;
      away.points += ag > hg ? 3 : hg === ag ? 1 : 0;
    };
    for (const f of input.played) play(f, f.homeGoals, f.awayGoals);
    for (const f of input.remaining) {
      const ratio = strength[f.home]! / strength[f.away]!;
      play(f, knuthPoisson(f.homeExpectedGoals * ratio), knuthPoisson(f.awayExpectedGoals / ratio));
    }
    table.sort((a, b) => b.points - a.points || b.gf - b.ga - (a.gf - a.ga) || b.gf - a.gf);
    champions += table[0]!.club;
  }
  return champions;
}

async function timed<T>(work: () => Promise<T> | T): Promise<number> {
  const start = performance.now();
  await work();
  return (performance.now() - start) / 1000;
}

export async function benchProjections(): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  // A first run starts the thread machinery once, as a running worker has.
  await runSeasonsOnThread(league(30), 1000, 'warm-up');
  let rate = 0;
  for (const [round, goal] of [
    [1, 10],
    [30, 1],
  ] as const) {
    const input = league(round - 1);
    const seconds = await timed(() => runSeasonsOnThread(input, SEASONS, `bench-${round}`));
    const reference = await timed(() => referenceSeasons(input, SEASONS));
    if (round === 1) rate = (SEASONS * input.remaining.length) / seconds;
    rows.push({
      group: GROUP,
      name: `10,000 seasons from round ${round} (${input.remaining.length} fixtures to play)`,
      value: seconds,
      unit: 's',
      reference: { name: 'plain objects and sort, no head to head', value: reference },
      note: `goal ≤ ${goal} s on 2 cores; one season thread`,
    });
  }
  rows.push({
    group: GROUP,
    name: 'sampler rate, from round 1',
    value: rate,
    unit: 'fixture-draws/s',
    note: 'what the projection price is set against (docs/decisions.md "Season projections")',
  });
  return rows;
}
