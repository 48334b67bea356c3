// What makes two projections the same (docs/decisions.md §12, "Same inputs, same table"), as a simulation's
// cache identity does for simulations (§6): the season as the job stores it (clubs, results so far, the
// remaining fixtures' rates, the rules, its data_version), the seasons asked for, and the sampler's model
// (projection-model.json: its version and strength sd). The seed is drawn from that identity, so the same
// identity gives the same table; a stored table of the same identity and key mode is reused.
import { createHash } from 'node:crypto';
import { projectionModel } from './projection-model.js';
import type { StoredSeason } from './projection-store.js';

export interface ProjectionIdentity {
  /** The whole SHA-256 of the identity, hex: the key a stored table is found by. */
  cacheKey: string;
  /** Its first 16 hex digits, the sampler's seed (as a simulation's, docs/decisions.md §6). */
  seed: string;
}

export function projectionIdentity(inputs: StoredSeason, seasons: number): ProjectionIdentity {
  const identity = JSON.stringify({
    model: { version: projectionModel.version, strength_sd: projectionModel.strength_sd },
    seasons,
    inputs,
  });
  const cacheKey = createHash('sha256').update(identity).digest('hex');
  return { cacheKey, seed: cacheKey.slice(0, 16) };
}
