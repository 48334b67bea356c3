// How long a client should wait before asking again for an open job or batch (Retry-After and
// retry_after_seconds, docs/api.md §4.5): the draws still to run at the engine's measured speed, and for a
// job still in the queue the draws queued with it, not a constant. One formula for jobs and batches.
import type { EngineGate } from './types.js';

/** Retry-After stays within what a client's wait_seconds can cover (docs/api.md §4.4). */
export const MAX_RETRY_AFTER_SECONDS = 25;

/**
 * Whole seconds, 1 to MAX_RETRY_AFTER_SECONDS, until `draws` more draws are likely done; `queued`: the
 * work is still waiting in the queue, so the draws queued with it (an upper bound of those ahead of it)
 * run first.
 */
export function retryAfterSeconds(engine: EngineGate, draws: number, queued: boolean): number {
  const ahead = queued ? (engine.queuedDraws?.() ?? 0) : 0;
  const seconds = Math.ceil(engine.estimateSeconds(Math.max(0, draws) + ahead));
  return Math.min(MAX_RETRY_AFTER_SECONDS, Math.max(1, seconds));
}
