// `matchsim projection --competition ID` as an operator runs it: a separate process over the demo data.
import { describe, expect, it } from 'vitest';
import { cliOnDemoData } from '../helpers/cli-on-demo.js';

const matchsim = cliOnDemoData('projection');

describe('matchsim projection', () => {
  it('projects a competition of the database: the table and the odds, as JSON or a table', async () => {
    const json = await matchsim(['projection', '--competition', '1', '--seasons', '1000', '--json']);
    expect(json.code, json.stderr).toBe(0);
    const projection = JSON.parse(json.stdout);
    expect(projection).toMatchObject({ competition: { competition_id: 1 }, seasons: 1000 });
    expect(projection.teams).toHaveLength(20);
    const titles = projection.teams.reduce((sum: number, team: { title: number }) => sum + team.title, 0);
    expect(titles).toBeCloseTo(1, 12);
    const table = await matchsim(['projection', '--competition', '1', '--seasons', '1000']);
    expect(table.stdout.split('\n')[1]).toMatch(
      /^rank\s+club\s+played\s+points\s+expected_points\s+title\s+top_four\s+relegation/,
    );
  });

  it('refuses a seasons count out of range (exit 2) and an unknown competition (exit 1)', async () => {
    const few = await matchsim(['projection', '--competition', '1', '--seasons', '20']);
    expect(few.code).toBe(2);
    expect(few.stderr).toContain('--seasons must be a whole number from 1000 to 100000');
    const unknown = await matchsim(['projection', '--competition', '77']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('No competition 77.');
  });
});
