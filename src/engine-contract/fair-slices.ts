// Which run's draws an engine counts next, when runs of several lanes wait for it (docs/decisions.md §6
// "Fair shares"): a run's draws are cut into slices (the CPU pool's ranges, fallback/cpu-engine.ts; a
// GPU dispatch's jobs, gpu/engine.ts), and the next slice goes to the lane that has had least of the
// engine lately, by draws over the lane's weight. It is start-time fair queuing (Goyal, Vin and Cheng,
// 1996), the ordering that deficit round robin approximates: a lane that comes back after a pause
// starts at the engine's present, not at the credit it did not use, so a newly arrived lane gets the
// very next slice and then lanes that both wait take turns by draws. Within a lane its interactive runs
// (a request waits on them) go first, then its others in the order they came. The order decides when a
// slice is counted, never what it counts: a draw depends only on its seed and its number.
import type { RunShare } from './run.js';

/** A slice of a run: `draws` is what its lane is charged for it. */
export interface Slice {
  draws: number;
}

/** A run added to the queue: `drop` takes its slices not yet handed out away (the run failed). */
export interface QueuedRun {
  drop(): void;
}

export interface FairSlices<S extends Slice> {
  /** Queues a run's slices, in the order they are to be counted. */
  add(share: RunShare, slices: readonly S[]): QueuedRun;
  /** The next slice to count, by the fair rule; null when none waits. */
  next(): S | null;
  /** The slice next() would hand out now, left in the queue. */
  peek(): S | null;
  /** Slices waiting. */
  size(): number;
}

interface LaneRun<S> {
  interactive: boolean;
  slices: S[];
  /** Slices handed out. */
  taken: number;
}

interface Lane<S> {
  weight: number;
  /** The lane's start tag: where on the engine's clock its next slice begins (virtual draws). */
  start: number;
  /** Where its last slice handed out ended. */
  finish: number;
  runs: LaneRun<S>[];
}

export function makeFairSlices<S extends Slice>(): FairSlices<S> {
  const lanes = new Map<string, Lane<S>>();
  /** The engine's clock: the start tag of the slice last handed out. */
  let now = 0;
  let waiting = 0;

  const pending = (lane: Lane<S>) => lane.runs.length > 0;

  /** The lane whose slice goes next: the smallest start tag; between equal ones, the lane that came first. */
  function laneNext(): Lane<S> | undefined {
    let chosen: Lane<S> | undefined;
    // Maps keep insertion order: a lane met earlier wins a tie.
    for (const lane of lanes.values()) {
      if (pending(lane) && (chosen === undefined || lane.start < chosen.start)) chosen = lane;
    }
    return chosen;
  }

  return {
    add(share, slices) {
      let lane = lanes.get(share.lane);
      if (lane === undefined) {
        lane = { weight: share.weight, start: now, finish: now, runs: [] };
        lanes.set(share.lane, lane);
      }
      // A lane that had nothing waiting begins at the present, or where its last slice ended if later.
      if (!pending(lane)) lane.start = Math.max(now, lane.finish);
      lane.weight = Math.max(Number.MIN_VALUE, share.weight);
      const run: LaneRun<S> = { interactive: share.interactive, slices: [...slices], taken: 0 };
      if (run.slices.length > 0) {
        // Interactive runs after the lane's other interactive ones, ahead of its batch runs.
        const at = share.interactive ? lane.runs.findIndex((other) => !other.interactive) : -1;
        if (at < 0) lane.runs.push(run);
        else lane.runs.splice(at, 0, run);
        waiting += run.slices.length;
      }
      const owner = lane;
      return {
        drop() {
          const index = owner.runs.indexOf(run);
          if (index < 0) return;
          owner.runs.splice(index, 1);
          waiting -= run.slices.length - run.taken;
        },
      };
    },
    next() {
      const chosen = laneNext();
      if (chosen === undefined) return null;
      const run = chosen.runs[0]!;
      const slice = run.slices[run.taken++]!;
      if (run.taken === run.slices.length) chosen.runs.shift();
      waiting--;
      now = chosen.start;
      chosen.finish = chosen.start + slice.draws / chosen.weight;
      chosen.start = chosen.finish;
      // Lanes with nothing waiting and no credit ahead of the present are forgotten: they would begin at
      // the present anyway, and the map stays as small as the lanes at work.
      for (const [name, lane] of lanes) if (!pending(lane) && lane.finish <= now) lanes.delete(name);
      return slice;
    },
    peek() {
      const run = laneNext()?.runs[0];
      return run === undefined ? null : run.slices[run.taken]!;
    },
    size: () => waiting,
  };
}
