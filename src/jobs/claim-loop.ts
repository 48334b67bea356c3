// The worker's claim loop and its wake rules: claims into the free slots once a pack's worth is free (or
// nothing is in flight), claims again at once while a claim filled its room, and otherwise sleeps until
// news wakes it or the poll comes. It owns only what decides when to claim (woken, the queue found
// drained, the sleeping loop's alarm, stopping); what a claim takes and runs is the worker's (`claim`).

export interface ClaimLoopOptions {
  /** Jobs in flight at most. */
  concurrency: number;
  /** The fewest jobs a claim takes while others are in flight. */
  packSize: number;
  /** Idle wait between claims when nothing wakes the loop. */
  pollMs: number;
  /** Jobs the worker holds now (claimed and not yet stored). */
  jobsHeld(): number;
  /** Claims up to `free` jobs and starts them: how many it claimed, or null when the claim failed. */
  claim(free: number): Promise<number | null>;
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

  /**
   * Claims up to the free slots once a pack's worth is free (or nothing is in flight); whether the claim
   * filled them all (more may be queued). Packs keep the GPU's dispatches full, and claiming while the
   * earlier packs still run keeps the CPU engine's threads busy across packs.
   */
  async function claimFree(): Promise<boolean> {
    const held = options.jobsHeld();
    const free = concurrency - held;
    if (free <= 0 || (free < packSize && held > 0)) return false;
    const claimed = await options.claim(free);
    if (claimed === null) return false;
    // Fewer than there was room for: the queue had no more when the claim read it. News of jobs queued
    // while it ran has set `woken` (the loop claims again at once) or comes later (wakeForWork).
    if (claimed < free) queueDrained = true;
    return claimed === free;
  }

  async function loop(): Promise<void> {
    while (!stopping) {
      woken = false;
      const full = await claimFree();
      if (stopping) break;
      // Claim again at once while a claim filled its room (more may be queued) and a pack's room is free;
      // otherwise wait for a wake-up or the poll.
      if ((full && concurrency - options.jobsHeld() >= packSize) || woken) continue;
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
