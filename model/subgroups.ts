// Subgroups of held-out matches the backtest scores separately (docs/model.md, "Backtest"):
// - promoted: a side that did not play in this competition the season before (a newcomer, whether
//   promoted for the first time or returning after years away);
// - few_matches: a side with fewer than 10 matches in this competition in the 365 days before the match;
// - early_season: both sides have played fewer than 8 matches of this season;
// - established: neither side is a newcomer.
import type { LeagueMatch } from './league-results.js';

export const SUBGROUPS = ['promoted', 'few_matches', 'early_season', 'established'] as const;
export type Subgroup = (typeof SUBGROUPS)[number];

const FEW_MATCHES = 10;
const RECENT_DAYS = 365;
const EARLY_SEASON_MATCHES = 8;

/** Teams of each competition and season: `${competition} ${season}` → team names. */
export function teamsBySeason(matches: readonly LeagueMatch[]): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const m of matches) {
    const key = `${m.competition} ${m.season}`;
    let teams = out.get(key);
    if (!teams) {
      teams = new Set();
      out.set(key, teams);
    }
    teams.add(m.home);
    teams.add(m.away);
  }
  return out;
}

/**
 * Whether a team is new to its competition this season: it played no match of the season before. The
 * first season of the data has no season before it and counts nobody as new.
 */
export function newcomerTest(
  matches: readonly LeagueMatch[],
): (match: Pick<LeagueMatch, 'competition' | 'season'>, team: string) => boolean {
  const teams = teamsBySeason(matches);
  return (match, team) => {
    const before = teams.get(`${match.competition} ${match.season - 1}`);
    return before !== undefined && !before.has(team);
  };
}

/** The subgroups of every match in `scored` (matches of `all`, which holds their history too). */
export function subgroupsOf(
  all: readonly LeagueMatch[],
  scored: readonly LeagueMatch[],
): Map<LeagueMatch, Subgroup[]> {
  const isNew = newcomerTest(all);
  const history = new Map<string, number[]>();
  const seasonCounts = new Map<string, number>();
  const beforeByMatch = new Map<LeagueMatch, { recent: [number, number]; season: [number, number] }>();
  for (const m of all) {
    const sides = [m.home, m.away] as const;
    const recent = sides.map((team) => {
      const days = history.get(`${m.competition} ${team}`) ?? [];
      return days.filter((d) => d < m.day && d >= m.day - RECENT_DAYS).length;
    }) as [number, number];
    const season = sides.map((team) => seasonCounts.get(`${m.competition} ${m.season} ${team}`) ?? 0) as [
      number,
      number,
    ];
    beforeByMatch.set(m, { recent, season });
    for (const team of sides) {
      const key = `${m.competition} ${team}`;
      const days = history.get(key) ?? [];
      days.push(m.day);
      // Only the last 365 days matter; drop older entries to keep the lists short.
      while (days.length > 0 && days[0]! < m.day - RECENT_DAYS) days.shift();
      history.set(key, days);
      const seasonKey = `${m.competition} ${m.season} ${team}`;
      seasonCounts.set(seasonKey, (seasonCounts.get(seasonKey) ?? 0) + 1);
    }
  }
  const out = new Map<LeagueMatch, Subgroup[]>();
  for (const m of scored) {
    const before = beforeByMatch.get(m);
    const groups: Subgroup[] = [];
    const promoted = isNew(m, m.home) || isNew(m, m.away);
    if (promoted) groups.push('promoted');
    if (before && Math.min(...before.recent) < FEW_MATCHES) groups.push('few_matches');
    if (before && Math.max(...before.season) < EARLY_SEASON_MATCHES) groups.push('early_season');
    if (!promoted) groups.push('established');
    out.set(m, groups);
  }
  return out;
}
