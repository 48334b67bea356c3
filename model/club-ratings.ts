// `matchsim ratings`: each club's attack and defence as of a date, on the feed's scale (docs/feed.md,
// "Ratings from results"). They are the walk-forward ratings the backtest scores (walk-forward.ts, the
// same code): Dixon-Coles with time decay, the shots-on-target blend, the newcomer prior and the goal level
// refitted on goals, fitted on the matches before the date, with the totals shrink (goal-totals.ts) folded
// into each club's two numbers. The ensemble's pi-ratings blend moves each match's supremacy by its own
// amount, which two numbers per club cannot carry; it is left out (docs/model.md says what it is worth).
import {
  type CompetitionProfile,
  competitionProfileSchema,
  fittedCompetitionProfile,
} from '../src/engine-contract/match-inputs.js';
import { defaultModelParams, type ModelParams } from '../src/engine-contract/model-params.js';
import { withProfilesBefore } from './fit-model.js';
import type { LeagueMatch } from './league-results.js';
import { isoDate } from './results-files.js';
import type { TeamRating } from './team-ratings.js';
import {
  clubsBySeason,
  forCompetition,
  MODEL_RATINGS,
  modelRatingsBefore,
  priorMeans,
  type RatingConfig,
  ratingContext,
  ratingSignal,
} from './walk-forward.js';

export const RATINGS_FORMAT = 'matchsim.ratings.v1';
const MS_PER_DAY = 86_400_000;

export interface ClubRating {
  name: string;
  attack: number;
  defence: number;
  /** The club's matches in the competition that the fit used (the last four years before the date). */
  matches: number;
  /** New to the competition this season: its ratings are pulled towards the newcomer prior. */
  newcomer: boolean;
}

export interface CompetitionRatings {
  /** The competition's folder name, e.g. `premier-league`. */
  competition: string;
  /** The season the ratings are for (the latest with a match before the date), e.g. `2022/23`. */
  season: string;
  matches: number;
  intercept: number;
  home_advantage: number;
  /** Dixon-Coles' low-score correction (informative; the engine has none). */
  rho: number;
  /** The totals shrink folded into the clubs' ratings (docs/model.md, "Totals shrink"). */
  totals_shrink: number;
  newcomer_prior: TeamRating | null;
  /** Card and shot rates of the three seasons before this one; null where the files lack the statistics. */
  profile: CompetitionProfile | null;
  clubs: ClubRating[];
}

export interface RatingsFile {
  format: typeof RATINGS_FORMAT;
  /** Ratings before this day's matches (YYYY-MM-DD). */
  as_of: string;
  competitions: CompetitionRatings[];
}

/** The ratings of every competition in `matches` before the day `asOf` (YYYY-MM-DD). */
export function clubRatingsAsOf(
  matches: readonly LeagueMatch[],
  asOf: string,
  params: ModelParams = defaultModelParams,
): RatingsFile {
  const day = isoDate(asOf);
  if (day === null) throw new Error(`--as-of ${asOf} is not a date (YYYY-MM-DD)`);
  const asOfDay = Math.round(Date.parse(`${day}T00:00:00Z`) / MS_PER_DAY);
  const competitions = [...new Set(matches.map((m) => m.competition))].sort();
  return {
    format: RATINGS_FORMAT,
    as_of: day,
    competitions: competitions.map((competition) =>
      competitionRatings(
        matches.filter((m) => m.competition === competition),
        asOfDay,
        forCompetition(MODEL_RATINGS, competition),
        params,
      ),
    ),
  };
}

function competitionRatings(
  own: readonly LeagueMatch[],
  asOfDay: number,
  config: RatingConfig,
  params: ModelParams,
): CompetitionRatings {
  const competition = own[0]!.competition;
  const before = own.filter((m) => m.day < asOfDay);
  if (before.length === 0) throw new Error(`${competition}: no result before the --as-of date`);
  const season = Math.max(...before.map((m) => m.season));
  // The backtest's walk-forward with this season held out: its context, signal and fit on this day.
  const context = ratingContext(own, [season], config);
  const meanFor = priorMeans(context, competition, season);
  const seasonClubs = clubsBySeason(own).get(season)!;
  const signal = ratingSignal(own, config, context.conversion);
  const { fit, centre } = modelRatingsBefore(signal, config, asOfDay, seasonClubs, meanFor);
  const shrink = config.totalShrink ?? 1;
  // The shrink moves log(λ_home·λ_away) to centre + shrink·(… − centre) (shrunkTotal); with u = attack −
  // defence that is u pulled towards `pivot` by 1 − shrink, half of the move on each rating.
  const pivot = (centre - 2 * fit.intercept - fit.homeAdvantage) / 2;
  const window = before.filter((m) => m.day >= asOfDay - config.windowDays);
  const clubs = seasonClubs.map((name): ClubRating => {
    const r = fit.teams.get(name) ?? meanFor(name);
    const move = shrink === 1 ? 0 : ((1 - shrink) * (r.attack - r.defence - pivot)) / 2;
    return {
      name,
      attack: r.attack - move,
      defence: r.defence + move,
      matches: window.filter((m) => m.home === name || m.away === name).length,
      newcomer: context.isNew({ competition, season }, name),
    };
  });
  const prior = context.newcomerPriors.get(competition);
  return {
    competition,
    season: `${season}/${String((season + 1) % 100).padStart(2, '0')}`,
    matches: window.length,
    intercept: fit.intercept,
    home_advantage: fit.homeAdvantage,
    rho: fit.rho,
    totals_shrink: shrink,
    newcomer_prior: prior ? { attack: prior.attack, defence: prior.defence } : null,
    profile: profileBefore(own, season, params),
    clubs,
  };
}

/**
 * The league profile the backtest gives a season: card and shot rates of the three seasons before it,
 * the reds split into straight reds and second yellows as the constants split theirs.
 */
function profileBefore(own: readonly LeagueMatch[], season: number, params: ModelParams) {
  const competition = own[0]!.competition;
  if (!own.some((m) => m.season < season && m.stats)) return null;
  const withProfile = withProfilesBefore(params, own, season, season, fittedRedRate(params));
  const profile = fittedCompetitionProfile(withProfile, competition);
  return profile && competitionProfileSchema.safeParse(profile).success ? profile : null;
}

/**
 * The red cards per side the constants were fitted on (all five leagues, not this competition alone): their
 * straight reds over the straight share of reds, which every fitted league profile keeps
 * (`competitionRates` in fit-model.ts). Undefined without fitted profiles: then the competition's own.
 */
function fittedRedRate(params: ModelParams): { home: number; away: number } | undefined {
  const shares = Object.values(params.league_profile ?? {})
    .filter(
      (p) => p.red_cards_per_match && p.straight_red_home !== undefined && p.straight_red_away !== undefined,
    )
    .map((p) => (p.straight_red_home! + p.straight_red_away!) / p.red_cards_per_match!);
  if (shares.length === 0) return undefined;
  const straightShare = shares.reduce((s, x) => s + x, 0) / shares.length;
  const straight = params.cards.straight_red_per_match;
  return { home: straight.home / straightShare, away: straight.away / straightShare };
}

const fixed = (x: number) => (x >= 0 ? ` ${x.toFixed(3)}` : x.toFixed(3));

/** The ratings laid out for people: one block per competition, one line per club. */
export function ratingsTable(file: RatingsFile): string {
  return file.competitions
    .map((c) => {
      const head =
        `${c.competition} ${c.season}, ratings before ${file.as_of}: intercept ${c.intercept.toFixed(3)}, ` +
        `home advantage ${c.home_advantage.toFixed(3)}, ${c.matches} matches, ` +
        `profile ${c.profile ? 'fitted' : 'none (global constants)'}`;
      const width = Math.max(4, ...c.clubs.map((club) => club.name.length));
      const lines = c.clubs.map((club) =>
        `${club.name.padEnd(width)}  ${fixed(club.attack)}  ${fixed(club.defence)}  ${String(club.matches).padStart(7)}  ${club.newcomer ? 'yes' : ''}`.trimEnd(),
      );
      return [head, `${'CLUB'.padEnd(width)}  ATTACK  DEFENCE  MATCHES  NEW`, ...lines].join('\n');
    })
    .join('\n\n');
}
