// What documents state about the model: the stored backtest, only for the model version it was run on.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadModelStatus, modelAccuracyFor, type StoredBacktest } from '../../src/engine/model-status.js';
import { defaultModelParams } from '../../src/engine-contract/model-params.js';

describe('modelAccuracyFor', () => {
  const stored = {
    model_version: 'minute-aaaaaaaaaa',
    status: 'qualified' as const,
    calibrated: true,
    held_out_seasons: [2022],
    metrics: { rps_1x2: 0.2 },
    comparison: { dixon_coles: { rps_1x2: 0.21 }, base_rates: { rps_1x2: 0.23 } },
  } satisfies StoredBacktest;

  it('serves the stored backtest only for the model version it was run on', () => {
    const same = modelAccuracyFor({ ...defaultModelParams, model_version: 'minute-aaaaaaaaaa' }, stored);
    expect(same.status).toBe('qualified');
    expect(same.calibrated).toBe(true);
    expect(same.metrics).toMatchObject({ rps_1x2: 0.2, rps_1x2_dixon_coles: 0.21, rps_1x2_base_rates: 0.23 });
    const refit = modelAccuracyFor({ ...defaultModelParams, model_version: 'minute-bbbbbbbbbb' }, stored);
    expect(refit.status).toBe('unqualified');
    expect(refit.calibrated).toBe(false);
    expect(modelAccuracyFor(defaultModelParams, null).status).toBe('unqualified');
  });
});

describe('loadModelStatus', () => {
  it('states the shipped backtest file as it stands (validation drops nothing documents show)', () => {
    const file = JSON.parse(
      readFileSync(new URL('../../src/engine/model-accuracy.json', import.meta.url), 'utf8'),
    );
    expect(loadModelStatus()).toEqual(modelAccuracyFor(defaultModelParams, file as StoredBacktest));
    expect(loadModelStatus().metrics).toHaveProperty('rps_1x2');
  });
});
