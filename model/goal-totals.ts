// Shrinking the rated total of goals towards the league's (docs/model.md, "Totals shrink").
//
// A match's rated goals multiply to exp(2·intercept + home advantage + u_home + u_away), where a club's
// u = attack − defence is how many goals its matches hold at either end; their ratio depends on
// attack + defence only (strength). The walk-forward estimate of u is noisier than its real spread
// across clubs, so the rated totals spread wider than the matches' real expected totals: matches rated
// low-scoring scored more than forecast, over 2.5 and both-teams-score were miscalibrated by bin. The
// forecast pulls each club's u a share `1 − shrink` of the way to the mean of the season's clubs, which
// keeps the ratio (home/away, so 1X2 barely moves) and rescales both sides' goals together. The centre is
// chosen so that the mean rated total over the season's pairings stays what the ratings gave.
import { expectedGoals, type RatingFit, type TeamRating } from './team-ratings.js';

/** Rated goals of one match. */
export interface RatedGoals {
  lambdaHome: number;
  lambdaAway: number;
}

/**
 * The log of the product of rated goals (the total's direction) that the clubs' totals are pulled
 * towards: over every home/away pairing of `clubs`, Σ T·exp((shrink − 1)(L − centre)/2) = Σ T, where T
 * is a pairing's rated total and L the log of its product, so the mean total is unchanged.
 */
export function totalsCentre(
  fit: RatingFit,
  clubs: readonly string[],
  shrink: number,
  fallback: (team: string) => TeamRating,
): number {
  let total = 0;
  let weighted = 0;
  for (const home of clubs) {
    for (const away of clubs) {
      if (home === away) continue;
      const g = expectedGoals(fit, home, away, fallback);
      const t = g.home + g.away;
      total += t;
      weighted += t * Math.exp(((shrink - 1) * Math.log(g.home * g.away)) / 2);
    }
  }
  if (total === 0 || shrink === 1) return 0;
  return (2 / (1 - shrink)) * Math.log(total / weighted);
}

/** Rated goals with the log of their product moved to centre + shrink · (log product − centre). */
export function shrunkTotal<T extends RatedGoals>(rated: T, centre: number, shrink: number): T {
  const logProduct = Math.log(rated.lambdaHome * rated.lambdaAway);
  const factor = Math.exp(((shrink - 1) * (logProduct - centre)) / 2);
  return { ...rated, lambdaHome: rated.lambdaHome * factor, lambdaAway: rated.lambdaAway * factor };
}
