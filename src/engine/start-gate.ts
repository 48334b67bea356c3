// When the CPU path begins each of a run's jobs (docs/decisions.md §6, "Claims" and "Cancel"). A job is
// asked of the caller (RunContext.start) just before the engine begins it, not when it was handed over:
// the worker marks it started then, and until then a batch's cancel can still take it. Small jobs are
// asked for several at a time (one statement for many); a run over the CPU pool is asked for alone, once
// one of its lane's POOL_RUNS_AT_ONCE slots is free, so a batch of large jobs runs a few at a time, each
// over every core, and the rest stay cancellable, while another lane's run begins beside them at once
// and shares the pool's threads by turns (src/engine-contract/fair-slices.ts).

/**
 * Runs over the CPU engine's pool begun at a time by one lane (every pack the worker runs of it): one
 * counting, and the next one's ranges queued behind it, so that no pool thread waits between two runs. A
 * run's slot is given back once its draws are counted, before its document is built. Each lane (and a
 * lane's interactive runs apart from its others) has slots of its own: its runs never wait for another
 * lane's to end, since the pool interleaves the lanes' ranges.
 */
export const POOL_RUNS_AT_ONCE = 2;

/**
 * Small jobs are asked for together up to this many draws (or as many as lanes wait, whichever is more):
 * a batch of 1,000 jobs of ~140 draws costs a few statements per claimed pack, not one per job, and the
 * jobs marked started ahead of a free lane are a few milliseconds of the engine's work.
 */
const START_AHEAD_DRAWS = 20_000;

/** Slots of `size` for each lane, made as a lane asks and forgotten once all of its slots are free. */
export interface LaneSlots {
  acquire(lane: string): Promise<() => void>;
}

export function makeLaneSlots(size: number): LaneSlots {
  const lanes = new Map<string, { slots: Slots; taken: number }>();
  return {
    async acquire(lane) {
      let entry = lanes.get(lane);
      if (entry === undefined) {
        entry = { slots: makeSlots(size), taken: 0 };
        lanes.set(lane, entry);
      }
      const owner = entry;
      owner.taken++;
      const release = await owner.slots.acquire();
      let released = false;
      return () => {
        if (released) return;
        released = true;
        release();
        if (--owner.taken === 0 && lanes.get(lane) === owner) lanes.delete(lane);
      };
    },
  };
}

/** A bounded number of slots, taken in the order asked. */
export interface Slots {
  /** Resolves with the slot's release (which may be called more than once) once one is free. */
  acquire(): Promise<() => void>;
}

export function makeSlots(size: number): Slots {
  let free = size;
  const waiting: Array<() => void> = [];
  const releaser = () => {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = waiting.shift();
      if (next) next();
      else free++;
    };
  };
  return {
    acquire() {
      if (free > 0) {
        free--;
        return Promise.resolve(releaser());
      }
      return new Promise((resolve) => waiting.push(() => resolve(releaser())));
    },
  };
}

export interface StartGateOptions<T> {
  /** The id to ask about, or null for a job already started (a GPU job the CPU runs after all). */
  askId(entry: T): string | null;
  draws(entry: T): number;
  /** Whether the job runs over the CPU pool: begun alone, once a pool slot of its lane is free. */
  pooled(entry: T): boolean;
  /** A pool slot for the job, once one is free: resolves with its release. */
  poolSlot(entry: T): Promise<() => void>;
  /** RunContext.start; absent, every job may start. */
  start: ((jobIds: readonly string[]) => Promise<ReadonlySet<string>>) | undefined;
  signal: AbortSignal;
}

/** A job a lane may begin now; `release` gives back its pool slot (a no-op for a small job). */
export interface Begun<T> {
  entry: T;
  release(): void;
}

export interface StartGate<T> {
  /** The next job to begin, in order; null once none is left (or the run was aborted). */
  next(): Promise<Begun<T> | null>;
  /** The entries never handed to a lane (left by an abort), to give back what they hold. */
  left(): T[];
}

const noRelease = () => {};

export function makeStartGate<T>(entries: readonly T[], options: StartGateOptions<T>): StartGate<T> {
  let asked = 0;
  const ready: Begun<T>[] = [];
  const dropped: T[] = [];
  let asking: Promise<void> | null = null;
  /** Lanes waiting in next(): small jobs are asked for at least this many at a time. */
  let waiting = 0;

  /** The entries of `group` that may start, in order. */
  async function allowed(group: readonly T[]): Promise<T[]> {
    const ids = group.map(options.askId).filter((id): id is string => id !== null);
    if (!options.start || ids.length === 0) return [...group];
    const started = await options.start(ids);
    return group.filter((entry) => {
      const id = options.askId(entry);
      return id === null || started.has(id);
    });
  }

  async function ask(): Promise<void> {
    const first = entries[asked]!;
    if (options.pooled(first)) {
      asked++;
      const release = await options.poolSlot(first);
      let begins = false;
      try {
        begins = !options.signal.aborted && (await allowed([first])).length === 1;
      } finally {
        if (begins) ready.push({ entry: first, release });
        else release();
        if (!begins && options.signal.aborted) dropped.push(first);
      }
      return;
    }
    const group: T[] = [];
    let draws = 0;
    while (asked < entries.length) {
      const entry = entries[asked]!;
      if (options.pooled(entry)) break;
      if (group.length >= waiting && draws + options.draws(entry) > START_AHEAD_DRAWS) break;
      group.push(entry);
      draws += options.draws(entry);
      asked++;
    }
    for (const entry of await allowed(group)) ready.push({ entry, release: noRelease });
  }

  return {
    async next() {
      waiting++;
      try {
        for (;;) {
          if (options.signal.aborted) {
            for (const begun of ready.splice(0)) {
              begun.release();
              dropped.push(begun.entry);
            }
            return null;
          }
          const begun = ready.shift();
          if (begun) return begun;
          if (asked >= entries.length && !asking) return null;
          // Asked a microtask later, so that the lanes that start together are counted in `waiting`.
          asking ??= Promise.resolve()
            .then(ask)
            .finally(() => {
              asking = null;
            });
          await asking;
        }
      } finally {
        waiting--;
      }
    },
    left: () => [...dropped, ...entries.slice(asked)],
  };
}
