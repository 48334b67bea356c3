// A run fitted to the market (docs/model.md, "Fitting to the market"): the compile's fit reproduces the
// de-margined prices by its exact forward pass, and the CPU engine's draws of the fitted tables agree with
// that pass within Monte Carlo error; an unfitted compile is untouched (test/engine/golden.test.ts).
import { describe, expect, it } from 'vitest';
import { simulateRange } from '../../fallback/engine.js';
import {
  compileFixture,
  compileWithEventTables,
  createCalibrationCache,
  marketFitOfInputs,
} from '../../src/engine/compile.js';
import { FIT_TOLERANCE, type MarketFit } from '../../src/engine/market-fit.js';
import { createSimulationEngine } from '../../src/engine/runner.js';
import {
  C_FT_GRID,
  COUNTER_WORDS,
  EVENT_TABLE_WORDS,
  FIXTURE_WORDS,
  GRID_SIZE,
  THRESHOLD_WORDS,
} from '../../src/engine-contract/layout.js';
import type { MarketInputs, MatchInputs } from '../../src/engine-contract/match-inputs.js';
import { defaultModelParams } from '../../src/engine-contract/model-params.js';
import { plausibleFixture, withAnnouncedLineup } from './plausible-teams.js';

const even = plausibleFixture(31, { teamId: 1, attack: 0, defence: 0 }, { teamId: 2, attack: 0, defence: 0 });
const favourite = plausibleFixture(
  32,
  { teamId: 3, attack: 0.45, defence: 0.3 },
  { teamId: 4, attack: -0.3, defence: -0.25 },
);
const announced = (inputs: MatchInputs): MatchInputs => ({
  ...inputs,
  home: withAnnouncedLineup(inputs.home),
  away: withAnnouncedLineup(inputs.away),
});
/** A league that sends players off four to six times as often as the model's global rates. */
const redCardLeague: MatchInputs = {
  ...even,
  profile: {
    yellow_per_match: { home: 2.9, away: 3.3 },
    straight_red_per_match: { home: 0.15, away: 0.2 },
    booked_player_factor: 0.6,
    shots: { conversion: 0.11, on_target_share: 0.35 },
  },
};

function market(targets: MarketInputs['targets'], fit: MarketInputs['fit'] = 'exact'): MarketInputs {
  return { odds: { '1x2': [2, 3, 4] }, margin_method: 'shin', fit, targets };
}

const cases: { name: string; inputs: MatchInputs; market: MarketInputs }[] = [
  {
    name: 'an even match, predicted XIs',
    inputs: even,
    market: market({ home_win: 0.46, draw: 0.27, away_win: 0.27 }),
  },
  {
    name: 'a strong favourite',
    inputs: favourite,
    market: market({ home_win: 0.82, draw: 0.12, away_win: 0.06 }),
  },
  {
    name: 'a short-priced draw',
    inputs: announced(even),
    market: market({ home_win: 0.33, draw: 0.36, away_win: 0.31 }),
  },
  {
    name: 'a red-card-heavy league',
    inputs: redCardLeague,
    market: market({ home_win: 0.5, draw: 0.26, away_win: 0.24 }),
  },
  {
    name: '1X2 and a total',
    inputs: announced(favourite),
    market: market({ home_win: 0.62, draw: 0.22, away_win: 0.16, over_2_5: 0.58 }),
  },
  {
    name: 'supremacy only',
    inputs: even,
    market: market({ home_win: 0.55, draw: 0.25, away_win: 0.2 }, 'supremacy'),
  },
];

function fitted(inputs: MatchInputs, m: MarketInputs): MarketFit {
  return marketFitOfInputs({ ...inputs, market: m }, defaultModelParams);
}

describe('the market fit', () => {
  it.each(cases)('reproduces its targets by the forward pass: $name', ({ inputs, market: m }) => {
    const fit = fitted(inputs, m);
    const { targets } = m;
    expect(fit.reached).toBe(true);
    const a = fit.achieved;
    expect(Math.abs(a.home_win + a.draw + a.away_win - 1)).toBeLessThan(1e-12);
    const supremacy = targets.home_win - targets.away_win;
    if (targets.over_2_5 !== undefined) {
      expect(Math.abs(a.home_win - a.away_win - supremacy)).toBeLessThan(FIT_TOLERANCE);
      expect(Math.abs(a.over_2_5 - targets.over_2_5)).toBeLessThan(FIT_TOLERANCE);
    } else if (m.fit === 'supremacy') {
      expect(Math.abs(a.home_win - a.away_win - supremacy)).toBeLessThan(FIT_TOLERANCE);
      // The level is the model's: the fitted goals in all are the model's rated goals in all, near enough.
      const total = fit.ratedGoals[0] + fit.ratedGoals[1];
      const model = fit.modelRatedGoals[0] + fit.modelRatedGoals[1];
      expect(Math.abs(total / model - 1)).toBeLessThan(0.02);
    } else {
      expect(Math.abs(a.home_win - targets.home_win)).toBeLessThan(FIT_TOLERANCE);
      expect(Math.abs(a.draw - targets.draw)).toBeLessThan(FIT_TOLERANCE);
      expect(Math.abs(a.away_win - targets.away_win)).toBeLessThan(FIT_TOLERANCE);
    }
  });

  it('prices that no goals can give are out of reach', () => {
    // Two sides this even draw one match in fifty only at absurd scoring rates.
    const fit = fitted(even, market({ home_win: 0.49, draw: 0.02, away_win: 0.49 }));
    expect(fit.reached).toBe(false);
  });

  it('is what the compile uses, and the engine draws what the pass priced', () => {
    const draws = 400_000;
    for (const { inputs, market: m } of [cases[0]!, cases[3]!, cases[4]!]) {
      const compiled = compileFixture({ ...inputs, market: m }, defaultModelParams);
      const fit = compiled.marketFit!;
      expect(fit.achieved).toEqual(fitted(inputs, m).achieved);
      expect(compiled.ratedGoals).toEqual({ home: fit.ratedGoals[0], away: fit.ratedGoals[1] });
      const counts = new Uint32Array(COUNTER_WORDS);
      simulateRange(compiled, { lo: 0x5eed, hi: 53 }, 0, draws, counts);
      let home = 0;
      let draw = 0;
      let over = 0;
      for (let h = 0; h < GRID_SIZE; h++) {
        for (let a = 0; a < GRID_SIZE; a++) {
          const n = counts[C_FT_GRID + h * GRID_SIZE + a]!;
          if (h > a) home += n;
          else if (h === a) draw += n;
          if (h + a >= 3) over += n;
        }
      }
      const near = (p: number, count: number) =>
        expect(Math.abs(count / draws - p)).toBeLessThan(4 * Math.sqrt((p * (1 - p)) / draws));
      near(fit.achieved.home_win, home);
      near(fit.achieved.draw, draw);
      near(fit.achieved.over_2_5, over);
    }
  });

  it('leaves an unfitted compile as it was, and a thread keeps each fit', () => {
    const into = () => ({
      fixture: new Uint32Array(FIXTURE_WORDS),
      thresholds: new Uint32Array(THRESHOLD_WORDS),
      eventTables: new Uint32Array(EVENT_TABLE_WORDS),
    });
    const cache = createCalibrationCache();
    const plain = compileWithEventTables(even, defaultModelParams, into(), cache);
    expect(plain.marketFit).toBeUndefined();
    expect(plain.thresholds).toEqual(compileFixture(even, defaultModelParams).thresholds);
    const inputs = { ...even, market: cases[0]!.market };
    const first = compileWithEventTables(inputs, defaultModelParams, into(), cache);
    const again = compileWithEventTables(inputs, defaultModelParams, into(), cache);
    expect(cache.fits.size).toBe(1);
    expect(again.marketFit).toBe(first.marketFit);
    expect(again.thresholds).toEqual(first.thresholds);
    expect(first.thresholds).not.toEqual(plain.thresholds);
  });

  it("a market's reach is asked of a job thread, which keeps the fit for the job's compile", async () => {
    const inputs = { ...favourite, market: cases[1]!.market };
    const engine = createSimulationEngine({ mode: 'cpu', cpuThreads: 1 });
    try {
      const onThread = await engine.fitMarket(inputs);
      expect(onThread).toEqual(marketFitOfInputs(inputs, defaultModelParams));
      // The same thread's cache gives it to the compile: the same fit, the same base goals.
      const cache = createCalibrationCache();
      expect(marketFitOfInputs(inputs, defaultModelParams, cache)).toEqual(onThread);
      expect(cache.fits.size).toBe(1);
    } finally {
      await engine.close();
    }
  });
});
