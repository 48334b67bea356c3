// The results rows this process has read or written, kept by id and by cache lookup (docs/decisions.md
// §6). A results row never changes once its document is the wire text, and is never deleted
// (result-store.ts; its organisation cannot be deleted while it names it), so a row known once is known
// for good: a cache hit's submission and a finished job's delivery then take the result, its document
// (some 11 KB in the stored form) included, from memory instead of a statement. A lookup that found nothing is not kept (the
// row may come later). One cache per database, made by the service graph (src/wiring.ts) and passed to
// the deliveries, submissions and worker of a process: result ids are unique only within one database.
import type { KnownResults, ResultLookup, SimulationResult } from './result-store.js';

/**
 * 32 MiB of stored documents (src/engine/stored-document.ts; some 9–13 KB each): two whole batches of
 * the largest size (1,000 items), so that a batch's results stream, reading the batch in order after the
 * worker stored it in order, finds every document in memory (with room for one batch's text, at 64 Mi
 * characters, the first ~50 were gone, and each document read back for a page pushed out one the next
 * page needed: see getResults).
 */
export const DEFAULT_KNOWN_RESULT_BYTES = 32 * 1024 * 1024;

function lookupKey({ cacheKey, scope, orgId }: ResultLookup): string {
  return scope === 'shared' ? `shared ${cacheKey}` : `private ${orgId} ${cacheKey}`;
}

const sizeOf = (result: SimulationResult) => result.document.deflated.byteLength;

/** Rows by id, the least recently used dropped first once their stored documents pass `maxBytes`. */
export function makeKnownResults(maxBytes = DEFAULT_KNOWN_RESULT_BYTES): KnownResults & { bytes(): number } {
  // A Map iterates in insertion order: a row used again is moved to the end, the first is the oldest.
  const rows = new Map<number, SimulationResult>();
  const ids = new Map<string, number>();
  let bytes = 0;
  const touch = (result: SimulationResult) => {
    rows.delete(result.id);
    rows.set(result.id, result);
    return result;
  };
  const forget = (result: SimulationResult) => {
    rows.delete(result.id);
    ids.delete(lookupKey(result));
    bytes -= sizeOf(result);
  };
  return {
    byId(resultId) {
      const result = rows.get(resultId);
      return result && touch(result);
    },
    byLookup(lookup) {
      const id = ids.get(lookupKey(lookup));
      const result = id === undefined ? undefined : rows.get(id);
      return result && touch(result);
    },
    remember(result) {
      if (sizeOf(result) > maxBytes) return;
      const previous = rows.get(result.id);
      if (previous) forget(previous);
      rows.set(result.id, result);
      ids.set(lookupKey(result), result.id);
      bytes += sizeOf(result);
      for (const oldest of rows.values()) {
        if (bytes <= maxBytes) break;
        forget(oldest);
      }
    },
    /** The stored documents' bytes held. */
    bytes: () => bytes,
  };
}
