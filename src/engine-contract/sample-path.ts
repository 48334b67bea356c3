// A recorded draw (a sample path): what the CPU engine's replay of a draw writes (fallback/engine.ts
// recordSamplePaths) and the document reads (src/engine/document.ts). It is a fact both sides agree on,
// like the counter layout, so it lives in the contract that both stand on.

export type SampleEventType = 'goal' | 'yellow_card' | 'red_card' | 'substitution';

/** One event of a recorded draw, in player slots (the document maps slots to player ids). */
export interface SampleEvent {
  step: number;
  side: number;
  type: SampleEventType;
  /** Scorer, booked player, or the player coming on; -1 when no player could be credited. */
  slot: number;
  assistSlot?: number;
  offSlot?: number;
}

export interface SamplePath {
  draw: number;
  score: [number, number];
  halfTime: [number, number];
  addedMinutes: [number, number];
  /** Slots of each side's starting XI. */
  starters: [number[], number[]];
  events: SampleEvent[];
}
