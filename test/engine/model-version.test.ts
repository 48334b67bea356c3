// The version rule (docs/decisions.md §13, "Changelog of model versions"): the model version names the
// constants and the engine's random stream, so the shipped parameters' version must be the hash of both,
// and a new stream cannot ship under an old version. The golden tests (golden.test.ts,
// document-golden.test.ts) hold the other half: bits that change under the same version fail there.
import { describe, expect, it } from 'vitest';
import { modelVersionOf, versioned } from '../../model/fit-model.js';
import { defaultModelParams, engineStreamOf } from '../../src/engine-contract/model-params.js';
import { ENGINE_STREAM } from '../../src/engine-contract/rng.js';

describe('the model version', () => {
  it('of the shipped parameters is the hash of their constants and stream', () => {
    const { model_version, ...content } = defaultModelParams;
    expect(
      model_version,
      `model-params.json's model_version must be ${modelVersionOf(content)}, the hash of its constants and ` +
        'engine_stream (model/fit-model.ts versioned)',
    ).toBe(modelVersionOf(content));
  });

  it('names the stream the engines draw', () => {
    expect(engineStreamOf(defaultModelParams)).toBe(ENGINE_STREAM);
  });

  it('changes with the stream alone', () => {
    const { model_version: _, ...content } = defaultModelParams;
    const next = { ...content, engine_stream: engineStreamOf(defaultModelParams) + 1 };
    expect(modelVersionOf(next)).not.toBe(defaultModelParams.model_version);
  });

  it('is made with the current stream by a fit', () => {
    const params = versioned({ ...defaultModelParams, engine_stream: ENGINE_STREAM + 7 });
    expect(params.engine_stream).toBe(ENGINE_STREAM);
    const { model_version, ...content } = params;
    expect(model_version).toBe(modelVersionOf(content));
    // The same constants and stream: the same version.
    expect(versioned(params).model_version).toBe(model_version);
  });
});
