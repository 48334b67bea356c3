// The backtest as Markdown tables: what `matchsim model backtest` prints and docs/model.md shows.
import type { BacktestResult, ForecastMetrics } from './backtest.js';

const METRICS: [keyof ForecastMetrics, string][] = [
  ['rps_1x2', 'RPS 1X2'],
  ['log_loss_1x2', 'log loss 1X2'],
  ['log_loss_over_under_2_5', 'log loss over/under 2.5'],
  ['log_loss_btts', 'log loss both teams score'],
  ['ece_1x2', 'ECE 1X2'],
  ['ece_over_under_2_5', 'ECE over/under 2.5'],
  ['ece_btts', 'ECE both teams score'],
];

const f4 = (x: number) => x.toFixed(4);
const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

export function formatBacktest(result: BacktestResult): string {
  const { model, dixon_coles, base_rates } = result.comparison;
  const lines: string[] = [
    `Model ${result.model_version}: **${result.status}**, calibrated: **${result.calibrated}**. ` +
      `Held-out seasons ${result.held_out_seasons.map((s) => `${s}/${String((s + 1) % 100).padStart(2, '0')}`).join(', ')}; ` +
      `${model.matches} matches; constants ${result.constants}.`,
    '',
    '| metric | model | Dixon-Coles | base rates |',
    '|---|---|---|---|',
    ...METRICS.map(
      ([key, label]) => `| ${label} | ${f4(model[key])} | ${f4(dixon_coles[key])} | ${f4(base_rates[key])} |`,
    ),
  ];
  const check = result.engine_check;
  if (check) {
    lines.push(
      '',
      `Real engine on ${check.matches} of those matches (${check.draws} draws each), same matches:`,
      '',
      '| metric | engine | analytic | Dixon-Coles |',
      '|---|---|---|---|',
      ...METRICS.slice(0, 4).map(
        ([key, label]) =>
          `| ${label} | ${f4(check.engine[key])} | ${f4(check.analytic_same_matches[key])} | ${f4(check.dixon_coles_same_matches[key])} |`,
      ),
      '',
      `Largest engine − analytic gap in a 1X2 probability: ${f4(check.max_abs_difference_1x2)}.`,
      '',
      '| per match (matches with statistics) | engine | observed |',
      '|---|---|---|',
      ...Object.keys(check.box_score.engine).map(
        (key) =>
          `| ${key.replaceAll('_', ' ')} | ${check.box_score.engine[key]!.toFixed(2)} | ${check.box_score.observed[key]!.toFixed(2)} |`,
      ),
    );
  }
  const { observed, model: predicted } = result.realism;
  lines.push(
    '',
    '| realism | observed | model |',
    '|---|---|---|',
    `| home / draw / away | ${pct(observed.home_win)} / ${pct(observed.draw)} / ${pct(observed.away_win)} | ${pct(predicted.home_win)} / ${pct(predicted.draw)} / ${pct(predicted.away_win)} |`,
    `| goals per match | ${observed.goals_per_match.toFixed(2)} | ${predicted.goals_per_match.toFixed(2)} |`,
    `| over 2.5 / both score / 0-0 | ${pct(observed.over_2_5)} / ${pct(observed.btts)} / ${pct(observed.nil_nil)} | ${pct(predicted.over_2_5)} / ${pct(predicted.btts)} / ${pct(predicted.nil_nil)} |`,
    `| first-half share of goals | ${pct(observed.first_half_goal_share)} | ${pct(predicted.first_half_goal_share)} |`,
    `| half-time leader wins / draws / loses | ${pct(observed.half_time_leader.wins)} / ${pct(observed.half_time_leader.draws)} / ${pct(observed.half_time_leader.loses)} | ${pct(predicted.half_time_leader.wins)} / ${pct(predicted.half_time_leader.draws)} / ${pct(predicted.half_time_leader.loses)} |`,
    `| HT/FT ${Object.keys(observed.ht_ft).join(' ')} | ${Object.values(observed.ht_ft).map(pct).join(' ')} | ${Object.values(predicted.ht_ft).map(pct).join(' ')} |`,
    '',
    '| check | value | threshold | pass |',
    '|---|---|---|---|',
    ...result.checks.map((c) => `| ${c.name} | ${f4(c.value)} | ${c.threshold} | ${c.pass ? 'yes' : 'no'} |`),
  );
  return lines.join('\n');
}
