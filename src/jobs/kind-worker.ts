// The worker of every job kind (docs/ARCHITECTURE.md, "Job kinds"): claims a kind's jobs through its queue
// (kind-queue.ts, on the kind's table) into the free slots, tracks the jobs it holds while their leases are
// extended (the heartbeat), does the queue's maintenance, and drains at a stop, on the claim loop and its
// wake rules (claim-loop.ts) and the job system's waits (waits.ts, news of job-news.ts). What a kind brings
// is its handler, which runs a claimed pack and stores its outcomes (simulations: worker.ts, the engine;
// season projections: src/projections/projection-worker.ts), and its price (src/billing/amounts.ts): a
// new kind needs no worker, loop, lease rule or wait of its own.
import { type ClaimLoop, makeClaimLoop } from './claim-loop.js';
import type { KindQueue, LeasedJob } from './kind-queue.js';
import type { HoldSweeper } from './sweeper.js';
import type { WorkerLogger } from './types.js';
import type { JobWaits } from './waits.js';
import { drain, startChores } from './worker-chores.js';

/** The jobs a worker holds (claimed, outcome not yet stored), as its kind's handler sees them. */
export interface HeldJobs<J extends LeasedJob> {
  get(jobId: string): J | undefined;
  /** How many the worker holds. */
  count(): number;
  /** The job is the worker's no more (its outcome stored, or never to run): its slot and weight free. */
  letGo(job: J): void;
  /** Slots were freed: the claim loop claims into them (claim-loop.ts wakeForSlots). */
  slotsFreed(): void;
  stopping(): boolean;
  /** Aborted at a stop that asks it (abortRuns), or past the drain's timeout. */
  signal: AbortSignal;
}

export interface JobKind<J extends LeasedJob> {
  queue: KindQueue<J>;
  /** A job's weight in a claim's room (a simulation's draws); absent: a claim is bounded by jobs alone. */
  weight?(job: J): number;
  /**
   * The kind's handler, given the jobs its worker holds: runs a claimed pack and stores its jobs'
   * outcomes, letting each job go once its outcome is stored (what is still held when it returns is let
   * go then). A failure to store is left to the lease: the job is claimed and run again.
   */
  handler(held: HeldJobs<J>): (jobs: J[]) => Promise<void>;
}

export interface KindWorkerOptions<J extends LeasedJob> {
  kind: JobKind<J>;
  workerId: string;
  logger: WorkerLogger;
  /** Jobs in flight at most; a claim takes up to the free slots at once. */
  concurrency: number;
  /** While jobs are in flight, a claim waits until this many slots are free (claim-loop.ts). */
  packSize: number;
  /** Idle wait between claims when nothing wakes the worker. */
  pollMs: number;
  leaseMs: number;
  /** Interval of lease rescue and hold sweeping. */
  maintenanceMs: number;
  /** The clock of the maintenance (lapsed leases, ended holds). */
  clock: () => Date;
  /** The weight the worker may hold (claimed, not yet stored), read before each claim; absent: no bound. */
  room?: (() => number) | undefined;
  /** A job of at most this weight is claimed even while the weight held leaves no room (claim-loop.ts). */
  smallWeight?: number | undefined;
  sweeper?: HoldSweeper | undefined;
  /** The news of jobs queued (made in src/wiring.ts); without it the worker finds work by polling. */
  waits?: Pick<JobWaits, 'listenForWork'> | undefined;
}

export interface KindWorker {
  workerId: string;
  /**
   * Stops claiming, lets the jobs in flight finish (drain), and stops the chores. With abortRuns the
   * handler's signal is aborted first. With timeoutMs the drain waits that long at most: the jobs still
   * running are then put back in the queue at once (`released`), and their runs, left behind, can no
   * longer store their outcomes.
   */
  stop(options?: { abortRuns?: boolean; timeoutMs?: number }): Promise<{ released: string[] }>;
}

/** The jobs a worker holds, by id, and their weight. */
function makeHeld<J extends LeasedJob>(weight: (job: J) => number) {
  const jobs = new Map<string, J>();
  let held = 0;
  return {
    jobs,
    weight: () => held,
    hold(job: J) {
      this.letGo(jobs.get(job.id) ?? job);
      jobs.set(job.id, job);
      held += weight(job);
    },
    // A job can be claimed again by this same worker after its lease lapsed mid-run: each run lets go only
    // of its own entry, so the newer run keeps its heartbeat.
    letGo(job: J) {
      if (jobs.get(job.id) !== job) return;
      jobs.delete(job.id);
      held -= weight(job);
    },
  };
}

export function startKindWorker<J extends LeasedJob>(options: KindWorkerOptions<J>): KindWorker {
  const { kind, workerId, logger } = options;
  const weight = kind.weight ?? (() => 0);
  const held = makeHeld<J>(weight);
  const runs = new Set<Promise<void>>();
  const abort = new AbortController();
  // The handler calls back into the claim loop it runs under; it runs only once the loop has claimed.
  let claims: ClaimLoop;
  const run = kind.handler({
    get: (jobId) => held.jobs.get(jobId),
    count: () => held.jobs.size,
    letGo: (job) => held.letGo(job),
    slotsFreed: () => claims.wakeForSlots(),
    stopping: () => claims.stopping(),
    signal: abort.signal,
  });

  function track(jobs: J[]): void {
    for (const job of jobs) held.hold(job);
    const running = run(jobs)
      .catch((error) => logger.error({ err: error, worker_id: workerId }, 'job batch failed'))
      .finally(() => {
        for (const job of jobs) held.letGo(job);
        runs.delete(running);
        claims.wakeForSlots();
      });
    runs.add(running);
  }

  claims = makeClaimLoop({
    concurrency: options.concurrency,
    packSize: Math.max(1, Math.min(options.packSize, options.concurrency)),
    pollMs: options.pollMs,
    drawsBudget: options.room,
    jobsHeld: () => held.jobs.size,
    drawsHeld: held.weight,
    smallDraws: options.smallWeight,
    claim: async (free, room, only) => {
      try {
        const jobs = await kind.queue.claim(workerId, free, options.leaseMs, room, only);
        if (jobs.length > 0) track(jobs);
        return { jobs: jobs.length, draws: jobs.reduce((sum, job) => sum + weight(job), 0) };
      } catch (error) {
        logger.error({ err: error, worker_id: workerId }, 'claim failed');
        return null;
      }
    },
  });
  const stopChores = startChores({
    queue: kind.queue,
    workerId,
    clock: options.clock,
    logger,
    leaseMs: options.leaseMs,
    maintenanceMs: options.maintenanceMs,
    sweeper: options.sweeper,
    jobs: held.jobs,
    rescued: () => claims.wakeForWork(),
  });
  // The first claim once the worker listens, so that no news between them is missed; a failed LISTEN
  // leaves the poll in charge.
  let listening = (options.waits?.listenForWork(() => claims.wakeForWork()) ?? Promise.resolve(null)).catch(
    (error: unknown) => {
      logger.warn({ err: error, worker_id: workerId }, 'LISTEN failed; polling only');
      return null;
    },
  );
  void listening.then(() => claims.start());

  return {
    workerId,
    async stop(stopOptions = {}) {
      await listening;
      const looped = claims.stop();
      if (stopOptions.abortRuns) abort.abort();
      await looped;
      const released = await drain(
        { queue: kind.queue, workerId, logger, runs, jobs: held.jobs, abort },
        stopOptions.timeoutMs,
      );
      await stopChores();
      const unlisten = await listening;
      listening = Promise.resolve(null);
      await unlisten?.();
      return { released };
    },
  };
}
