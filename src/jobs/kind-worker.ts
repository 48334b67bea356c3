// The worker of a job kind whose jobs run one at a time off the event loop (season projections, docs/
// ARCHITECTURE.md "Job kinds"): the engine worker's claim loop (claim-loop.ts) and wake-ups (waits.ts,
// news of job-news.ts), around a handler that claims one job of its kind, runs it and stores its outcome.
// A new kind of that shape brings its handler and its price, not a loop, a lease rule or a wait of its own.
import { makeClaimLoop } from './claim-loop.js';
import type { JobWaits } from './waits.js';

export interface KindWorkerOptions {
  /** Claims one queued job of the kind, runs it and stores its outcome; false when none was queued. */
  runNext(): Promise<boolean>;
  /** The news of jobs queued (made in src/wiring.ts); without it the worker finds work by polling. */
  waits?: Pick<JobWaits, 'listenForWork'> | undefined;
  /** How often an idle worker looks for jobs that no news told it of. */
  pollMs: number;
  onError?: ((error: unknown) => void) | undefined;
}

export interface KindWorker {
  /** Stops claiming; resolves once the job in hand is stored. */
  stop(): Promise<void>;
}

export function startKindWorker(options: KindWorkerOptions): KindWorker {
  let holding = false;
  const loop = makeClaimLoop({
    concurrency: 1,
    packSize: 1,
    pollMs: options.pollMs,
    jobsHeld: () => (holding ? 1 : 0),
    // The job is run and stored within its claim: the loop claims the next one at once after a job, and
    // sleeps until news or the poll after a claim that found none.
    claim: async () => {
      holding = true;
      try {
        return { jobs: (await options.runNext()) ? 1 : 0, draws: 0 };
      } catch (error) {
        options.onError?.(error);
        return null;
      } finally {
        holding = false;
      }
    },
  });
  // The first claim once the worker listens, so that no news between them is missed; a failed LISTEN
  // leaves the poll in charge.
  const listening = (options.waits?.listenForWork(() => loop.wakeForWork()) ?? Promise.resolve(null)).catch(
    (error: unknown) => {
      options.onError?.(error);
      return null;
    },
  );
  void listening.then(() => loop.start());
  return {
    stop: async () => {
      await loop.stop();
      await (await listening)?.();
    },
  };
}
