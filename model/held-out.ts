// What a backtest over held-out seasons starts from (backtest.ts, in-play-backtest.ts): the league
// matches, the model's constants fitted on the seasons before the first held-out one (unless the caller
// gives them), each held-out season's league profiles from the seasons before it (walk-forward, like the
// ratings), and the engine's per-step probabilities for each competition and held-out season.
import { paramsForFixture } from '../src/engine-contract/match-inputs.js';
import type { ModelParams } from '../src/engine-contract/model-params.js';
import { type FitOptions, fitModel, withProfilesBefore } from './fit-model.js';
import { competitionProfile } from './league-profile.js';
import { type LeagueMatch, loadLeagueMatches } from './league-results.js';
import { makeStepRateModel } from './step-rates.js';

export const DEFAULT_HELD_OUT_SEASONS = [2018, 2019, 2020, 2021, 2022] as const;

export type StepRateModel = ReturnType<typeof makeStepRateModel>;

export interface HeldOutOptions {
  dataDir: string;
  heldOutSeasons?: readonly number[];
  competitions?: readonly string[];
  /** Model constants; by default fitted on the seasons before the first held-out one. */
  params?: ModelParams;
  /** Options for that fit (sample sizes), when `params` is not given. */
  fitOptions?: Pick<FitOptions, 'scoreStateMatches' | 'redCardMatches' | 'maxEvaluations' | 'engineDraws'>;
}

export interface HeldOut {
  /** The held-out seasons, in order. */
  heldOutSeasons: number[];
  firstHeldOut: number;
  matches: LeagueMatch[];
  competitions: string[];
  /** The constants, given or fitted. */
  params: ModelParams;
  /** Each held-out season's constants with that season's league profiles. */
  bySeason: Map<number, ModelParams>;
  /** The engine's per-step probabilities, by `competition season`. */
  stepModels: Map<string, StepRateModel>;
}

/** `label` starts the progress lines ("backtest", "in-play backtest"). */
export async function prepareHeldOut(
  options: HeldOutOptions,
  label: string,
  log: (message: string) => void,
): Promise<HeldOut> {
  const heldOutSeasons = [...(options.heldOutSeasons ?? DEFAULT_HELD_OUT_SEASONS)].sort((a, b) => a - b);
  const firstHeldOut = heldOutSeasons[0]!;
  const matches = loadLeagueMatches(options.dataDir, options.competitions);
  const competitions = [...new Set(matches.map((m) => m.competition))].sort();
  let params = options.params;
  if (!params) {
    log(`${label}: fitting the constants on seasons before ${firstHeldOut}`);
    params = (
      await fitModel({
        dataDir: options.dataDir,
        untilSeason: firstHeldOut,
        ...(options.competitions ? { competitions: options.competitions } : {}),
        ...(options.fitOptions ?? {}),
        onProgress: log,
      })
    ).params;
  }
  const fitted = params;
  const bySeason = new Map(
    heldOutSeasons.map((season) => [season, withProfilesBefore(fitted, matches, season, firstHeldOut)]),
  );
  // As the engine compiles its fixtures: the global constants with the season's league profile.
  const stepModels = new Map<string, StepRateModel>();
  for (const [season, seasonParams] of bySeason) {
    for (const c of competitions) {
      stepModels.set(
        `${c} ${season}`,
        makeStepRateModel(paramsForFixture(seasonParams, competitionProfile(c, seasonParams))),
      );
    }
  }
  return { heldOutSeasons, firstHeldOut, matches, competitions, params, bySeason, stepModels };
}
