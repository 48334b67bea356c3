// The version rule's storage half (docs/decisions.md §13, "Changelog of model versions"): one model version is
// served at a time; a result is reused only under the version that made it (the version is part of a
// run's identity, which its cache key and seed hash), and a result stored under an earlier version stays
// readable as it was stored.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documentSummary, documentWireText } from '../../src/engine/document-schema.js';
import { documentText, storedDocument } from '../../src/engine/stored-document.js';
import { defaultModelParams } from '../../src/engine-contract/model-params.js';
import examples from '../../src/http/openapi/examples.json' with { type: 'json' };
import { findCachedResult, getResult, storeResult } from '../../src/results/result-store.js';
import { runIdentity } from '../../src/simulations/prepare-run.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => db.close());

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const inputs = { fixture_id: 101, home: { xi: [1, 2, 3] }, away: { xi: [4, 5, 6] } };

describe('a run under another model version', () => {
  it('is another run: its identity, seed and cache key differ, and nothing else does', () => {
    const earlier = runIdentity({ inputs, draws: 1000, modelVersion: 'minute-2cd6e48fd7' });
    const current = runIdentity({ inputs, draws: 1000, modelVersion: defaultModelParams.model_version });
    expect(defaultModelParams.model_version).not.toBe('minute-2cd6e48fd7');
    expect(current).not.toBe(earlier);
    expect(sha256(current).slice(0, 16)).not.toBe(sha256(earlier).slice(0, 16));
    expect(JSON.parse(current)).toEqual({ ...JSON.parse(earlier), model: defaultModelParams.model_version });
    // The identity is the text it always was, so the seeds and keys of stored runs do not move.
    expect(earlier).toBe(
      '{"inputs":{"fixture_id":101,"home":{"xi":[1,2,3]},"away":{"xi":[4,5,6]}},"draws":1000,' +
        '"model":"minute-2cd6e48fd7"}',
    );
    expect(
      runIdentity({ inputs, draws: 10, modelVersion: 'v', market: { m: 1 }, fromState: { minute: 60 } }),
    ).toBe(
      '{"inputs":{"fixture_id":101,"home":{"xi":[1,2,3]},"away":{"xi":[4,5,6]}},"draws":10,"model":"v","market":{"m":1},"from_state":{"minute":60}}',
    );
  });

  it('does not reuse a result stored under an earlier version, which stays readable as stored', async () => {
    // A document of the service (captured), as the earlier version made it.
    const example = (examples as { Simulation: { simulation: { model: object } } }).Simulation.simulation;
    const document = { ...example, model: { ...example.model, version: 'minute-2cd6e48fd7' } };
    const wire = documentWireText(document);
    const earlierKey = sha256(
      `live:shared:${runIdentity({ inputs, draws: 1000, modelVersion: 'minute-2cd6e48fd7' })}`,
    );
    const stored = await db.sql.begin((tx) =>
      storeResult(
        tx,
        {
          cacheKey: earlierKey,
          scope: 'shared',
          orgId: null,
          fixtureId: 101,
          dataVersion: 'dv_test',
          draws: 1000,
          engine: 'cpu',
          runMs: 1,
          gpuMs: 0,
          summary: documentSummary(document),
          document: storedDocument(wire),
        },
        new Date(),
      ),
    );
    const currentKey = sha256(
      `live:shared:${runIdentity({ inputs, draws: 1000, modelVersion: defaultModelParams.model_version })}`,
    );
    expect(await findCachedResult(db.sql, { cacheKey: currentKey, scope: 'shared', orgId: null })).toBeNull();
    const found = await findCachedResult(db.sql, { cacheKey: earlierKey, scope: 'shared', orgId: null });
    expect(documentText(found!.document)).toBe(wire);
    const read = await getResult(db.sql, stored.id);
    expect(documentText(read!.document)).toBe(wire);
    expect(JSON.parse(documentText(read!.document)).model.version).toBe('minute-2cd6e48fd7');
  });
});
