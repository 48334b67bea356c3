// `matchsim simulate --fixture ID --odds H,D,A [--total O,U] [--fit supremacy]` as an operator runs it: a
// separate process over the demo data (docs/api.md §4.3, "Fitted to the market").
import { describe, expect, it } from 'vitest';
import { FIT_TOLERANCE } from '../../src/engine/market-fit.js';
import { removeMargin } from '../../src/market/margin-removal.js';
import { cliOnDemoData } from '../helpers/cli-on-demo.js';

const matchsim = cliOnDemoData('simulate');

describe('matchsim simulate', () => {
  it('fits a run to 1X2 and total odds and prints the market beside the fit', async () => {
    const args = ['simulate', '--fixture', '1040', '--draws', '1000', '--odds', '2.10,3.40,3.60'];
    const json = await matchsim([...args, '--total', '1.90,1.95', '--json']);
    expect(json.code, json.stderr).toBe(0);
    const { calibration } = JSON.parse(json.stdout);
    const over = removeMargin([1.9, 1.95], 'shin').probabilities[0]!;
    expect(calibration.fitted_to).toEqual(['home_win_minus_away_win', 'over_2_5']);
    expect(Math.abs(calibration.achieved.over_2_5 - over)).toBeLessThan(FIT_TOLERANCE);
    const table = await matchsim([...args, '--fit', 'supremacy']);
    expect(table.code, table.stderr).toBe(0);
    const lines = table.stdout.split('\n');
    expect(lines[1]).toMatch(/^figure\s+home_win\s+draw\s+away_win\s+over_2_5\s+goals/);
    expect(lines.slice(2, 5).map((line) => line.split(/\s{2,}/)[0])).toEqual([
      'this run',
      'market (shin)',
      'fit (supremacy)',
    ]);
  });

  it('refuses odds the model cannot reach, and flags that need --odds', async () => {
    const unreachable = await matchsim(['simulate', '--fixture', '1040', '--odds', '1.98,40,1.98']);
    expect(unreachable.code).not.toBe(0);
    expect(unreachable.stderr).toContain('cannot reproduce these prices');
    const stray = await matchsim(['simulate', '--fixture', '1040', '--total', '1.9,1.9']);
    expect(stray.code).toBe(2);
    expect(stray.stderr).toContain('go with --odds');
  });

  // Fixture 1040 of the demo finished 3-2, on every day (src/fixtures/demo-data.ts).
  it('runs from an in-play state: --from-minute 67 --score 0-1 --red-cards 0-1', async () => {
    const args = ['simulate', '--fixture', '1040', '--draws', '1000', '--from-minute', '67'];
    const json = await matchsim([...args, '--score', '0-1', '--red-cards', '0-1', '--json']);
    expect(json.code, json.stderr).toBe(0);
    const document = JSON.parse(json.stdout);
    expect(document.state).toMatchObject({
      minute: '67',
      score: { home: 0, away: 1 },
      red_cards: { home: 0, away: 1 },
    });
    expect(document.timeline.minute_label[0]).toBe('67');
    expect(document.result.away_win).toBeGreaterThan(document.result.home_win);
    const contradicts = await matchsim([...args, '--score', '4-0']);
    expect(contradicts.code).not.toBe(0);
    expect(contradicts.stderr).toContain('from_state.score.home');
    const table = await matchsim([...args, '--score', '0-2']);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout.split('\n')[0]).toContain("from 67' at 0-2");
    const outside = await matchsim(['simulate', '--fixture', '1040', '--from-minute', '95']);
    expect(outside.code).not.toBe(0);
    expect(outside.stderr).toContain('from_state.minute');
    const stray = await matchsim(['simulate', '--fixture', '1040', '--score', '1-0']);
    expect(stray.code).toBe(2);
    expect(stray.stderr).toContain('go with --from-minute');
  });
});
