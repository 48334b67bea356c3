// The market backtest (model/market-backtest.ts, docs/model.md "Fitting to the market"): the Premier
// League's 2020/21 to 2022/23 files of test/football-data, copied at test time, with closing odds columns
// written into 2022/23 (the repository's data has none), as football-data.co.uk's files carry them.
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { closingOddsOf } from '../../model/league-results.js';
import { marketBacktest } from '../../model/market-backtest.js';
import { readResultsFile, readResultsFolder } from '../../model/results-files.js';
import { removeMargin } from '../../src/market/margin-removal.js';
import { testDataDir } from '../helpers/football-data.js';

const source = join(testDataDir, 'leagues', 'premier-league');
const root = mkdtempSync(join(tmpdir(), 'matchsim-market-backtest-'));
const folder = join(root, 'premier-league');
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Decimal odds of probabilities with a 5% margin. */
const oddsOf = (probabilities: number[]) => probabilities.map((p) => (1 / (p * 1.05)).toFixed(3));

/**
 * 2022/23 with closing columns: Pinnacle's on most rows, only the market average's on every seventh,
 * none on every tenth (those are left out of the backtest).
 */
function withClosingOdds(text: string): string {
  const [header, ...rows] = text.trimEnd().split('\n');
  const lines = rows.map((row, i) => {
    const home = 0.3 + (i % 9) * 0.04;
    const result = oddsOf([home, 0.27, 1 - home - 0.27]);
    const over = oddsOf([0.45 + (i % 5) * 0.03, 0.55 - (i % 5) * 0.03]);
    if (i % 10 === 0) return `${row},,,,,,,,,,`;
    if (i % 7 === 0) return `${row},,,,,,${result.join(',')},${over.join(',')}`;
    return `${row},${result.join(',')},${over.join(',')},,,,,`;
  });
  return [`${header},PSCH,PSCD,PSCA,PC>2.5,PC<2.5,AvgCH,AvgCD,AvgCA,AvgC>2.5,AvgC<2.5`, ...lines].join('\n');
}

mkdirSync(folder, { recursive: true });
for (const file of ['season-2021.csv', 'season-2122.csv'])
  copyFileSync(join(source, file), join(folder, file));
writeFileSync(
  join(folder, 'season-2223.csv'),
  withClosingOdds(readFileSync(join(source, 'season-2223.csv'), 'utf8')),
);

describe('closing odds in results files', () => {
  it("reads Pinnacle's closing columns first, the market average's where they are blank, none when neither", () => {
    const header =
      'Date,HomeTeam,AwayTeam,FTHG,FTAG,PSCH,PSCD,PSCA,PC>2.5,PC<2.5,AvgCH,AvgCD,AvgCA,AvgC>2.5,AvgC<2.5';
    const text = [
      header,
      '2023-01-01,A,B,1,0,2.1,3.4,3.6,1.9,1.95,2.0,3.3,3.5,1.85,1.9',
      '2023-01-02,C,D,1,0,,,,,,2.0,3.3,3.5,1.85,1.9',
      '2023-01-03,E,F,1,0,1.0,3.3,3.5,,,,,,,',
    ].join('\n');
    const matches = readResultsFile('odds.csv', text, 'test', 2022);
    expect(matches[0]!.closing).toEqual({ result: [2.1, 3.4, 3.6], total: [1.9, 1.95] });
    expect(matches[1]!.closing).toEqual({ result: [2.0, 3.3, 3.5], total: [1.85, 1.9] });
    // Odds of 1.0 are no price: the row has none.
    expect(matches[2]!.closing).toBeUndefined();
    expect(closingOddsOf({ PSCH: '', PSCD: '', PSCA: '' })).toBeNull();
  });
});

describe('the market backtest', () => {
  it('scores over 2.5 by the model, the fits to the closing 1X2 and the closing total, on matches with both', () => {
    const matches = readResultsFolder(root, ['premier-league']);
    const result = marketBacktest(matches, [2022]);
    const heldOut = matches.filter((match) => match.season === 2022);
    const priced = heldOut.filter((match) => match.closing?.result && match.closing.total);
    expect(result.matches).toBe(priced.length);
    expect(result.withoutOdds).toBe(heldOut.length - priced.length);
    expect(result.withoutOdds).toBe(38); // every tenth of 380
    expect(result.over25.map((row) => row.name)).toEqual([
      'model',
      'fitted exact',
      'fitted supremacy',
      'closing total',
    ]);
    // The closing total's row is its de-margined over 2.5 against the outcomes.
    const logLoss =
      priced.reduce((sum, match) => {
        const over = removeMargin(match.closing!.total!, 'shin').probabilities[0]!;
        return sum - Math.log(match.homeGoals + match.awayGoals > 2.5 ? over : 1 - over);
      }, 0) / priced.length;
    expect(result.over25[3]!.logLoss).toBeCloseTo(logLoss, 12);
    for (const row of result.over25) {
      expect(row.logLoss).toBeGreaterThan(0.5);
      expect(row.logLoss).toBeLessThan(1);
      expect(row.brier).toBeGreaterThan(0.15);
      expect(row.brier).toBeLessThan(0.35);
    }
    // Fitting moves the model's over 2.5: an exact fit follows the odds' balance and level.
    expect(result.over25[1]!.logLoss).not.toBe(result.over25[0]!.logLoss);
  }, 120_000);
});
