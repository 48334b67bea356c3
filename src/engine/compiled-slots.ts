// Memory for compiled fixtures (job-work.ts compileShared): fixed-size slots carved from large shared
// buffers, handed out and taken back by the compile cache (job-threads.ts), so a process that compiles a
// thousand fixtures writes into the same pages over and over. A fresh SharedArrayBuffer per compile cost
// more than the compile: every table's pages faulted in anew, and V8 freed the old ones only at a full
// collection (on 2 cores, a 1,000-fixture batch spent about 2 ms a job in the kernel; docs/decisions.md
// §6, "What a job costs the host").
import { EVENT_TABLE_WORDS, FIXTURE_WORDS, THRESHOLD_WORDS } from '../engine-contract/layout.js';

/** One compiled fixture's tables, as views of a slot. */
export interface SlotTables {
  fixture: Uint32Array;
  thresholds: Uint32Array;
  eventTables: Uint32Array;
}

export const SLOT_WORDS = FIXTURE_WORDS + THRESHOLD_WORDS + EVENT_TABLE_WORDS;
export const SLOT_BYTES = SLOT_WORDS * Uint32Array.BYTES_PER_ELEMENT;
/** Slots per shared buffer: about 6.4 MB a buffer. */
const SLOTS_PER_BUFFER = 8;

export interface SlotPool {
  /** A free slot's tables, as new views (a view never outlives its use: caches keyed by view stay apart). */
  take(): SlotTables;
  /** Gives back the slot of `tables` (views from take). Nothing may read or write them afterwards. */
  give(tables: SlotTables): void;
  /** Slots made so far, and how many of them are free. */
  stats(): { slots: number; slotsFree: number };
}

interface Slot {
  buffer: SharedArrayBuffer;
  /** Word offset of the slot in its buffer. */
  at: number;
}

export function createSlotPool(): SlotPool {
  const free: Slot[] = [];
  const taken = new WeakMap<Uint32Array, Slot>();
  let slots = 0;
  function grow() {
    const buffer = new SharedArrayBuffer(SLOTS_PER_BUFFER * SLOT_BYTES);
    for (let i = SLOTS_PER_BUFFER - 1; i >= 0; i--) free.push({ buffer, at: i * SLOT_WORDS });
    slots += SLOTS_PER_BUFFER;
  }
  return {
    take() {
      if (free.length === 0) grow();
      const slot = free.pop()!;
      const tables = {
        fixture: new Uint32Array(slot.buffer, slot.at * 4, FIXTURE_WORDS),
        thresholds: new Uint32Array(slot.buffer, (slot.at + FIXTURE_WORDS) * 4, THRESHOLD_WORDS),
        eventTables: new Uint32Array(
          slot.buffer,
          (slot.at + FIXTURE_WORDS + THRESHOLD_WORDS) * 4,
          EVENT_TABLE_WORDS,
        ),
      };
      taken.set(tables.fixture, slot);
      return tables;
    },
    give(tables) {
      const slot = taken.get(tables.fixture);
      if (slot === undefined) throw new Error('a slot given back twice, or not from this pool');
      taken.delete(tables.fixture);
      free.push(slot);
    },
    stats: () => ({ slots, slotsFree: free.length }),
  };
}
