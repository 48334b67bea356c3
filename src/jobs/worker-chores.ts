// The worker's chores, beside its claims and stores: the heartbeat that extends the leases of the jobs it
// holds, the maintenance of the queue (rescuing lapsed leases, sweeping ended holds), and the drain at a
// stop. Each periodic chore skips its turn while its previous run is still going.
import type { KindQueue, LeasedJob } from './kind-queue.js';
import type { HoldSweeper } from './sweeper.js';
import type { WorkerLogger } from './types.js';

export interface ChoreOptions {
  queue: KindQueue<LeasedJob>;
  workerId: string;
  clock: () => Date;
  logger: WorkerLogger;
  leaseMs: number;
  /** Interval of lease rescue and hold sweeping. */
  maintenanceMs: number;
  sweeper?: HoldSweeper | undefined;
  /** The jobs the worker holds (claimed, not yet stored), by id: the leases to extend. */
  jobs: ReadonlyMap<string, LeasedJob>;
  /** Jobs were put back in the queue (leases rescued): there may be work to claim. */
  rescued(): void;
}

/** Starts the heartbeat and the maintenance; the function returned stops both, once their runs end. */
export function startChores(options: ChoreOptions): () => Promise<void> {
  const { logger, workerId } = options;
  const failed = (name: string) => (error: unknown) =>
    logger.error({ err: error, worker_id: workerId }, `${name} failed`);
  // The held jobs a heartbeat has named (cancelled or lost): each is logged once, not at every beat
  // until the worker lets it go. Kept as the worker's own entries, so a job claimed again is new.
  const named = new Set<LeasedJob>();
  const stopHeartbeat = every(
    Math.max(10, Math.floor(options.leaseMs / 3)),
    () => heartbeat(options, named),
    failed('heartbeat'),
  );
  // A kind whose claim takes lapsed leases over and that sweeps no holds (projections) has none to do.
  const hasMaintenance = options.queue.rescueExpiredLeases !== undefined || options.sweeper !== undefined;
  const stopMaintenance = hasMaintenance
    ? every(options.maintenanceMs, () => maintenance(options), failed('maintenance'))
    : async () => {};
  return async () => {
    await stopHeartbeat();
    await stopMaintenance();
  };
}

// A periodic task that skips its turn while the previous run is still going.
function every(ms: number, task: () => Promise<void>, onError: (error: unknown) => void) {
  let current: Promise<void> | null = null;
  const timer = setInterval(() => {
    if (current) return;
    current = task()
      .catch(onError)
      .finally(() => {
        current = null;
      });
  }, ms);
  return async () => {
    clearInterval(timer);
    await current;
  };
}

async function heartbeat(
  { queue, workerId, jobs, leaseMs, logger }: ChoreOptions,
  named: Set<LeasedJob>,
): Promise<void> {
  for (const job of named) if (jobs.get(job.id) !== job) named.delete(job);
  const ids = [...jobs.keys()];
  if (ids.length === 0) return;
  const held = new Set(await queue.heartbeat(workerId, ids, leaseMs));
  const goneJobs = ids.flatMap((id) => {
    const job = jobs.get(id);
    return !held.has(id) && job !== undefined && !named.has(job) ? [job] : [];
  });
  if (goneJobs.length === 0) return;
  for (const job of goneJobs) named.add(job);
  const gone = goneJobs.map((job) => job.id);
  // A batch's cancel takes the jobs a worker holds but has not begun: they leave the worker when their
  // start is refused (src/engine/start-gate.ts), and are no lost lease (docs/decisions.md §6, "Cancel").
  const cancelled = new Set(await queue.cancelledOf(gone));
  const lost = gone.filter((id) => !cancelled.has(id));
  if (cancelled.size > 0) {
    logger.info({ worker_id: workerId, job_ids: [...cancelled] }, 'held jobs cancelled before they began');
  }
  if (lost.length > 0) logger.warn({ worker_id: workerId, job_ids: lost }, 'lost the lease of running jobs');
}

async function maintenance(options: ChoreOptions): Promise<void> {
  const { logger, workerId, sweeper, clock } = options;
  const rescued = (await options.queue.rescueExpiredLeases?.(clock())) ?? { requeued: [], failed: [] };
  if (rescued.requeued.length > 0 || rescued.failed.length > 0) {
    const requeued = rescued.requeued.map((job) => job.id);
    const failed = rescued.failed.map((job) => job.id);
    logger.warn({ worker_id: workerId, requeued, failed }, 'rescued jobs whose lease ran out');
    options.rescued();
  }
  if (!sweeper) return;
  const swept = await sweeper.sweep(clock());
  if (swept.expiredJobs.length > 0) {
    logger.info(
      {
        worker_id: workerId,
        released_holds: swept.releasedHolds.length,
        expired_jobs: swept.expiredJobs.length,
      },
      'swept ended holds',
    );
  }
}

export interface DrainOptions {
  queue: KindQueue<LeasedJob>;
  workerId: string;
  logger: WorkerLogger;
  /** The runs of claimed packs still going; each removes itself when it ends. */
  runs: ReadonlySet<Promise<void>>;
  jobs: ReadonlyMap<string, LeasedJob>;
  /** Aborts the engine's runs (RunContext.signal). */
  abort: AbortController;
}

/**
 * Waits for the jobs in flight to finish and complete; their leases keep being extended meanwhile. Past
 * timeoutMs the jobs still running go back to the queue (their runs can then no longer complete them):
 * the ids of those put back.
 */
export async function drain(options: DrainOptions, timeoutMs: number | undefined): Promise<string[]> {
  const { runs, queue, workerId, logger } = options;
  let timer: NodeJS.Timeout | undefined;
  const deadline =
    timeoutMs === undefined
      ? null
      : new Promise<'timeout'>((resolve) => {
          timer = setTimeout(() => resolve('timeout'), timeoutMs);
        });
  try {
    while (runs.size > 0) {
      const all = Promise.all([...runs]);
      if ((await (deadline ? Promise.race([all, deadline]) : all)) !== 'timeout') continue;
      // Released before the abort: a run that the abort ends without an outcome cannot fail its job.
      const released = await queue.release(workerId, [...options.jobs.keys()]);
      options.abort.abort();
      logger.warn(
        { worker_id: workerId, job_ids: released },
        'shutdown timeout: running jobs put back in the queue',
      );
      return released;
    }
    return [];
  } finally {
    clearTimeout(timer);
  }
}
