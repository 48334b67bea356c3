// The worker's claim loop and its wake rules: claims into the free slots once a pack's worth is free (or
// nothing is in flight) and draws are left of the worker's budget (beyond it, only small runs and the
// jobs of lanes with nothing running), claims again at once while a claim filled its room, and otherwise
// sleeps until news wakes it or the poll comes. It owns only what decides when to claim (woken, the queue
// found drained, the sleeping loop's alarm, stopping); what a claim takes and runs is the worker's
// (`claim`).

import type { ClaimOnly } from './kind-queue.js';

export interface ClaimLoopOptions {
  /** Jobs in flight at most. */
  concurrency: number;
  /** The fewest jobs a claim takes while others are in flight. */
  packSize: number;
  /** Idle wait between claims when nothing wakes the loop. */
  pollMs: number;
  /**
   * The draws the worker may hold (claimed, not yet stored): what its engine can start soon
   * (docs/decisions.md §6 "Claims"). Read before each claim (the engine's measure moves). Absent: no
   * bound but the jobs' (a kind whose jobs have no draws).
   */
  drawsBudget?: (() => number) | undefined;
  /** Jobs the worker holds now (claimed and not yet stored), and their draws (absent: none counted). */
  jobsHeld(): number;
  drawsHeld?: (() => number) | undefined;
  /**
   * While the draws held leave no room, the worker still claims, up to one budget's draws beyond it (and
   * `smallDraws` for small runs), the jobs of lanes with nothing running on any worker and the runs of at
   * most `smallDraws`: what the engine begins at once beside the large ones held (a small run on a job
   * thread, a larger one on the CPU pool or in the next GPU dispatch by turns with them,
   * src/engine-contract/fair-slices.ts; docs/decisions.md §6 "Fair shares"). Absent: none.
   */
  smallDraws?: number | undefined;
  /**
   * Claims up to `free` jobs, while the draws claimed before each are fewer than `draws` (with `only`,
   * only those it names: kind-queue.ts ClaimOnly), and starts them: how many jobs and draws it claimed,
   * or null when the claim failed.
   */
  claim(free: number, draws: number, only?: ClaimOnly): Promise<{ jobs: number; draws: number } | null>;
}

export interface ClaimLoop {
  /** Jobs may have been queued (a NOTIFY, this process's commit, a lease rescued, a stop): claim. */
  wakeForWork(): void;
  /**
   * Slots freed (a pack ran, its outcomes were stored): claim into them, unless the last claim emptied the
   * queue and nothing was queued since, which news of the queue would have said (wakeForWork). A lone job
   * was claimed four times where once does (test/jobs/wake-ups.test.ts): besides the claim that took it,
   * one again at once (that claim had found fewer jobs than it had room for), one after its outcome was
   * stored and one after its run; on a server its own NOTIFY woke the worker too (waits.ts now skips a
   * process's own). The poll stays the fallback for what no news reaches (a queued row that another
   * transaction held locked at the claim, SKIP LOCKED, and then left queued).
   */
  wakeForSlots(): void;
  stopping(): boolean;
  /** Starts the loop (once). */
  start(): void;
  /** Stops claiming: resolves when the loop has left (a claim under way ends first). */
  stop(): Promise<void>;
}

export function makeClaimLoop(options: ClaimLoopOptions): ClaimLoop {
  const { concurrency, packSize, pollMs } = options;
  let stopping = false;
  /** Set by a wake-up that came while the loop was busy claiming, so that it does not then sleep. */
  let woken = false;
  /**
   * The last claim found fewer queued jobs than it had room for, and no news of queued jobs has come
   * since: a slot that frees up then has nothing to claim, and no claim is sent for it (wakeForSlots).
   */
  let queueDrained = false;
  let wakeLoop = () => {};

  const wake = () => {
    woken = true;
    wakeLoop();
  };
  const wakeForWork = () => {
    queueDrained = false;
    wake();
  };

  /** Draws the worker may still claim. */
  const drawsRoom = () =>
    (options.drawsBudget?.() ?? Number.POSITIVE_INFINITY) - (options.drawsHeld?.() ?? 0);

  /**
   * Claims up to the free slots once a pack's worth is free (or nothing is in flight), while the draws
   * held leave room; whether the claim filled its room, by jobs or by draws (more may be queued). Packs
   * keep the GPU's dispatches full, and claiming while the earlier packs still run keeps the CPU engine's
   * threads busy across packs.
   */
  async function claimFree(): Promise<boolean> {
    const held = options.jobsHeld();
    const free = concurrency - held;
    if (free <= 0 || (held > 0 && free < packSize)) return false;
    if (held > 0 && drawsRoom() <= 0) {
      await claimSmall(free);
      return false;
    }
    // With nothing held the claim takes a job whatever its draws.
    const room = Math.max(1, drawsRoom());
    const claimed = await options.claim(free, room);
    if (claimed === null) return false;
    // A claim stops at the first job past its draws' room, so one that fell short of both its jobs and its
    // draws found no more queued: news of jobs queued while it ran has set `woken` (the loop claims again
    // at once) or comes later (wakeForWork).
    const full = claimed.jobs === free || claimed.draws >= room;
    if (!full) queueDrained = true;
    return full;
  }

  /**
   * With the draws held leaving no room: small runs and the jobs of lanes with nothing running only (the
   * first always), up to one budget's draws beyond the room, or `smallDraws` once held draws are past
   * that too; so that neither a small run nor another organisation's large one, queued behind the large
   * ones held, waits for one of them to end, and what a worker holds stays bounded (its memory, and the
   * leases its heartbeat extends). Whatever it finds, the queue is not drained: large jobs may still be
   * queued for the room a stored outcome frees.
   */
  async function claimSmall(free: number): Promise<void> {
    const small = options.smallDraws;
    if (small === undefined || small <= 0) return;
    const beyond = (options.drawsBudget?.() ?? 0) + drawsRoom();
    if (beyond > small) await options.claim(free, beyond, { maxWeight: small, idleLanes: true });
    else await options.claim(free, small, { maxWeight: small });
  }

  async function loop(): Promise<void> {
    while (!stopping) {
      woken = false;
      const full = await claimFree();
      if (stopping) break;
      // Claim again at once while a claim filled its room (more may be queued) and a pack's room is free;
      // otherwise wait for a wake-up or the poll.
      if ((full && concurrency - options.jobsHeld() >= packSize && drawsRoom() > 0) || woken) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, pollMs);
        wakeLoop = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wakeLoop = () => {};
    }
  }

  let looping: Promise<void> = Promise.resolve();
  return {
    start() {
      looping = loop();
    },
    wakeForWork,
    wakeForSlots() {
      if (!queueDrained) wake();
    },
    stopping: () => stopping,
    stop() {
      stopping = true;
      wakeForWork();
      return looping;
    },
  };
}
