// The market backtest (model/market-backtest.ts) on a tiny results file written here: a match whose
// closing 1X2 or total is not one bookmaker's market (best prices across books whose inverse odds add to
// under 1, or a margin over 1.5) is left out and counted, as a match without odds is, and the run goes on.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { marketBacktest, marketBacktestCommand } from '../../model/market-backtest.js';
import { readResultsFolder } from '../../model/results-files.js';

const root = mkdtempSync(join(tmpdir(), 'matchsim-market-odds-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const CLUBS = ['Alpha', 'Bravo', 'Charlie', 'Delta'];
const HEADER = 'Date,HomeTeam,AwayTeam,FTHG,FTAG,PSCH,PSCD,PSCA,PC>2.5,PC<2.5';
const MARGIN = '2.10,3.40,3.60,1.90,1.95';
/** Best prices across books: 1/2.6 + 1/3.9 + 1/4.2 ≈ 0.88, under 1. */
const BELOW_ONE = '2.60,3.90,4.20,1.90,1.95';
/** A total whose inverse odds add to about 1.67: no bookmaker's margin. */
const ABOVE_LIMIT = '2.10,3.40,3.60,1.20,1.20';

/** A double round robin of the four clubs in the season starting `year`, one match a week. */
function season(year: number, odds: (index: number) => string): string {
  const rows: string[] = [];
  let index = 0;
  for (const home of CLUBS)
    for (const away of CLUBS) {
      if (home === away) continue;
      const day = new Date(Date.UTC(year, 7, 10 + 7 * index)).toISOString().slice(0, 10);
      rows.push(`${day},${home},${away},${(index * 7) % 4},${(index * 5) % 3},${odds(index)}`);
      index++;
    }
  return [HEADER, ...rows].join('\n');
}

const folder = join(root, 'tiny-league');
mkdirSync(folder);
writeFileSync(
  join(folder, 'season-2223.csv'),
  season(2022, () => MARGIN),
);
// The held-out season: two matches below one, one above the limit, one without odds, eight priced.
writeFileSync(
  join(folder, 'season-2324.csv'),
  season(2023, (index) =>
    index === 2 || index === 7 ? BELOW_ONE : index === 4 ? ABOVE_LIMIT : index === 9 ? ',,,,' : MARGIN,
  ),
);

describe('the market backtest on odds that are not one market', () => {
  it('leaves such a match out and counts it, beside those without odds', () => {
    const matches = readResultsFolder(root);
    expect(matches).toHaveLength(24);
    const result = marketBacktest(matches, [2023]);
    expect(result).toMatchObject({ matches: 8, withoutOdds: 1, notOneMarket: 3 });
    for (const row of result.over25) expect(Number.isFinite(row.logLoss)).toBe(true);
  });

  it('says so in the command’s output', () => {
    const output = marketBacktestCommand({ results: root, seasons: [2023] });
    expect(output.value).toMatchObject({ matches: 8, withoutOdds: 1, notOneMarket: 3 });
    expect(output.human).toContain('8 held-out matches');
    expect(output.human).toContain('1 without them and 3 whose odds are not one market');
  });
});
