// The host's share of a job (docs/decisions.md §6, "What a job costs the host"): compiling its inputs,
// and once the draws are counted, its sample paths, its document and the document's wire text. These are
// pure functions of their arguments, run on the job threads (job-threads.ts, job-thread.ts) so that a
// host with n cores does n jobs' host work at once and the event loop only moves bytes; `threads: 0`
// runs them on the calling thread (tests).
import { recordSamplePaths, runWhole } from '../../fallback/cpu-engine.js';
import { adoptEventTables } from '../engine-contract/event-tables.js';
import { type CompiledFixture, type EngineSeed, FIXTURE_WORDS } from '../engine-contract/layout.js';
import type { MarketInputs, MatchInputs } from '../engine-contract/match-inputs.js';
import type { ModelParams } from '../engine-contract/model-params.js';
import type { SamplePath } from '../engine-contract/sample-path.js';
import {
  type CalibrationCache,
  compileKey,
  compileWithEventTables,
  createCalibrationCache,
  marketFitOfInputs,
  matchTextOf,
  PAYLOAD_MATCH_START,
} from './compile.js';
import { compileStateFrom } from './compile-path.js';
import type { SlotTables } from './compiled-slots.js';
import { SAMPLE_PATHS, simulationDocumentText } from './document.js';
import type { DocumentSummary } from './document-schema.js';
import type { MarketFit } from './market-fit.js';
import type { ModelStatus } from './model-status.js';
import { type StoredDocument, storedDocument } from './stored-document.js';

/** What every job of a process shares: the model and what documents say of it. */
export interface JobWorkSetting {
  params: ModelParams;
  modelStatus: ModelStatus;
}

/**
 * What a thread that does jobs' host work keeps from job to job, its own (job-thread.ts makes one per
 * thread, job-threads.ts one for work on the calling thread): the calibrations of the fixtures it
 * compiled (compile.ts CalibrationCache).
 */
export interface JobScratch {
  calibrations: CalibrationCache;
}

export function createJobScratch(): JobScratch {
  return { calibrations: createCalibrationCache() };
}

/** A compiled fixture whose tables (event tables included) are on shared memory: any thread reads them. */
export interface SharedCompiled extends CompiledFixture {
  eventTables: Uint32Array;
  /** What the compile's market fit found, for inputs that carry a market (market-fit.ts). */
  marketFit?: MarketFit;
}

/**
 * What a job carries for the engine (jobs.inputs): the resolved inputs and their watermark. The stored
 * payload may carry more fields (the request's view for its delivery); the engine ignores them.
 */
export interface JobPayload {
  match: MatchInputs;
  /** When the inputs were captured (simulation.basis.as_of). */
  as_of: string;
  /** Odds the client was offered, priced in the document's value section (document-value.ts). */
  offered_odds?: Record<string, number>;
}

/**
 * A job as its host work sees it. The payload stays the text the queue stored (some 11 KB) from the
 * claim to the thread that compiles or documents the job, which parses it: the event loop neither parses
 * nor re-serialises it, and a message carries one string instead of a cloned object tree
 * (docs/decisions.md §6, "What a job costs the host").
 */
export interface HostJob {
  /** compileKey of the payload (its match inputs): the compile cache finds a compiled fixture again by it. */
  key: string;
  /** The JobPayload as JSON text. */
  payloadJson: string;
  draws: number;
  seed: EngineSeed;
  /** simulation.basis.data_version. */
  dataVersion: string;
  queuedMs: number;
}

/** Payloads parsed, by the HostJob a task carries: a task that compiles and documents a job parses once. */
const parsedPayloads = new WeakMap<HostJob, JobPayload>();

function payloadOf(job: HostJob): JobPayload {
  let payload = parsedPayloads.get(job);
  if (payload === undefined) {
    payload = JSON.parse(job.payloadJson) as JobPayload;
    parsedPayloads.set(job, payload);
  }
  return payload;
}

/** A run's facts as the document states them. */
export interface RunFacts {
  engine: 'gpu' | 'cpu';
  backend: string;
  runMs: number;
}

/**
 * A finished document: its wire text in the stored form (what results store and responses splice in,
 * stored-document.ts) and its summary.
 */
export interface FinishedDocument {
  document: StoredDocument;
  summary: DocumentSummary;
}

/**
 * compileFixture with its tables and event tables written into `tables`, a slot of shared memory
 * (compiled-slots.ts) that every thread reads without a copy; the compile allocates no table.
 */
export function compileShared(
  inputs: MatchInputs,
  params: ModelParams,
  tables: SlotTables,
  scratch: JobScratch | null = null,
  knownFit: MarketFit | null = null,
): SharedCompiled {
  const compiled = compileWithEventTables(inputs, params, tables, scratch?.calibrations ?? null, knownFit);
  adoptEventTables(compiled.thresholds, compiled.eventTables);
  return compiled;
}

/**
 * A compiled fixture received from another thread: its event tables become the ones eventTablesOf finds
 * for its thresholds here (they were built once, where it was compiled).
 */
export function adoptCompiled(compiled: SharedCompiled): SharedCompiled {
  adoptEventTables(compiled.thresholds, compiled.eventTables);
  return compiled;
}

/**
 * What an in-play job's compile starts from: its payload without the state, as a pre-match job of the
 * same inputs carries it (the same text, so the same compile key), and that key.
 */
export interface PreMatchJob {
  key: string;
  payloadJson: string;
}

/** How a payload's match ends when it is an in-play job's: its from_state, last, as submissions write it. */
const STATE_MEMBER = ',"from_state":';

/**
 * The pre-match job of an in-play job read from its payload's text, without a parse (the compile cache
 * asks it on the event loop, job-threads.ts, so that the job's one task makes its tables): the match's
 * text without its last member, a from_state, as src/simulations/prepare-run.ts writes it. Null for a
 * job with no state, and for a text that does not show it so (a thread's compile then finds it,
 * preMatchJobOf). A `,"` never stands inside a JSON string, so the member found is a from_state key, and
 * its value read as one JSON value up to the match's end makes it the match's own last member.
 */
export function preMatchJobOfText(setting: JobWorkSetting, job: HostJob): PreMatchJob | null {
  const matchText = matchTextOf(job.payloadJson);
  const at = matchText?.lastIndexOf(STATE_MEMBER) ?? -1;
  if (matchText === null || at < 0) return null;
  const preMatchText = `${matchText.slice(0, at)}}`;
  // A key twice (which JSON.stringify never writes) is left to the thread's parse.
  if (preMatchText.includes('"from_state":')) return null;
  try {
    JSON.parse(matchText.slice(at + STATE_MEMBER.length, -1));
  } catch {
    return null;
  }
  // The payload's as_of and offered odds stay as they were: the compile key reads the match alone.
  const afterMatch = job.payloadJson.slice(PAYLOAD_MATCH_START.length + matchText.length);
  const payloadJson = `${PAYLOAD_MATCH_START}${preMatchText}${afterMatch}`;
  return { key: compileKey(payloadJson, setting.params), payloadJson };
}

/**
 * The pre-match job of an in-play job (one whose inputs carry a from_state), from its parsed payload:
 * the match written anew without its state; null for any other job.
 */
export function preMatchJobOf(setting: JobWorkSetting, job: HostJob): PreMatchJob | null {
  const { match, as_of } = payloadOf(job);
  if (match.from_state === undefined) return null;
  const { from_state: _state, ...preMatch } = match;
  const payloadJson = JSON.stringify({ match: preMatch, as_of } satisfies JobPayload);
  return { key: compileKey(payloadJson, setting.params), payloadJson };
}

/**
 * An in-play job's compiled fixture from its pre-match job's (compile-path.ts compileStateFrom): its
 * own fixture table, on new shared memory (some 4 KB), with the threshold and event tables of
 * `preMatch`, which must stay in use as long as this one is (job-threads.ts holds it).
 */
export function compileFromPreMatch(
  setting: JobWorkSetting,
  job: HostJob,
  preMatch: SharedCompiled,
): SharedCompiled {
  const fixture = new Uint32Array(new SharedArrayBuffer(FIXTURE_WORDS * Uint32Array.BYTES_PER_ELEMENT));
  return compileStateFrom(adoptCompiled(preMatch), payloadOf(job).match, setting.params, fixture);
}

/**
 * Sample paths, document and wire text of a job whose draws were counted (`counts` finalized); its sample
 * paths replayed here unless the run recorded them.
 */
export function finishJob(
  setting: JobWorkSetting,
  job: HostJob,
  compiled: CompiledFixture & { marketFit?: MarketFit },
  counts: Uint32Array,
  run: RunFacts,
  samples: readonly SamplePath[] = recordSamplePaths(compiled, job.seed, Math.min(SAMPLE_PATHS, job.draws)),
): FinishedDocument {
  const payload = payloadOf(job);
  const { text, summary } = simulationDocumentText({
    inputs: payload.match,
    params: setting.params,
    counts,
    samples,
    draws: job.draws,
    seed: job.seed,
    basis: { as_of: payload.as_of, data_version: job.dataVersion },
    timing: {
      engine: run.engine,
      backend: run.backend,
      queued_ms: job.queuedMs,
      run_ms: Math.round(run.runMs),
    },
    modelStatus: setting.modelStatus,
    marketFit: compiled.marketFit,
    offeredOdds: payload.offered_odds,
  });
  // The text is the built document's JSON, every field in the schema's order (test/engine/document.test.ts
  // checks that it equals documentWireText's, which parses through the schema first at twice the cost).
  // Deflated here, off the event loop, once for every store and delivery of it (stored-document.ts).
  return { document: storedDocument(text), summary };
}

/** A whole job's document and how long its draws took. */
export type WholeJobRun = FinishedDocument & { runMs: number };

/** A job's compiled fixture and its whole run (a 'compile-whole' task's answer). */
export interface CompiledAndRun {
  compiled: SharedCompiled;
  finished: WholeJobRun;
}

/**
 * A job's inputs compiled into `tables` and the job run whole, in one task: a small job whose fixture
 * is not compiled yet costs its thread one message each way, not two.
 */
export function compileAndRunWhole(
  setting: JobWorkSetting,
  scratch: JobScratch,
  job: HostJob,
  tables: SlotTables,
  backend: string,
  knownFit: MarketFit | null = null,
): CompiledAndRun {
  const compiled = compileShared(payloadOf(job).match, setting.params, tables, scratch, knownFit);
  return { compiled, finished: runWholeJob(setting, job, compiled, backend) };
}

/**
 * A whole job on this thread: its draws (the CPU engine's runWhole, for the jobs its spreadOf calls
 * 'whole'), then its document.
 */
export function runWholeJob(
  setting: JobWorkSetting,
  job: HostJob,
  compiled: SharedCompiled,
  backend: string,
): WholeJobRun {
  const run = runWhole(compiled, { draws: job.draws, seed: job.seed }, backend, SAMPLE_PATHS);
  return { ...finishJob(setting, job, compiled, run.counts, run, run.samples), runMs: run.runMs };
}

/**
 * A piece of a job's host work: what a job thread is sent (job-thread.ts), or does here with no threads.
 * An in-play job's 'compile' and 'compile-whole' compile nothing and answer `{ preMatch }` (its
 * PreMatchJob): the job threads then compile that job once for every state of the match (job-threads.ts)
 * and send 'from-pre-match' (or 'from-pre-match-whole', which runs the job whole as 'compile-whole' does).
 * A compile's `fit`: the market fit of its inputs where a 'fit' task found it (on whichever thread).
 */
export type JobTask =
  | { kind: 'compile'; job: HostJob; tables: SlotTables; fit: MarketFit | null }
  | { kind: 'compile-whole'; job: HostJob; tables: SlotTables; backend: string; fit: MarketFit | null }
  | { kind: 'from-pre-match'; job: HostJob; preMatch: SharedCompiled }
  | { kind: 'from-pre-match-whole'; job: HostJob; preMatch: SharedCompiled; backend: string }
  | { kind: 'whole'; job: HostJob; compiled: SharedCompiled; backend: string }
  | { kind: 'finish'; job: HostJob; compiled: SharedCompiled; counts: Uint32Array; run: RunFacts }
  | { kind: 'fit'; match: MatchInputs & { market: MarketInputs } };

/**
 * The work of a task, on the thread that runs it, with that thread's scratch: a compiled fixture it
 * carries becomes this thread's own (adoptCompiled; where it was compiled, that changes nothing).
 */
export function performJobTask(setting: JobWorkSetting, scratch: JobScratch, task: JobTask): unknown {
  switch (task.kind) {
    case 'compile': {
      const preMatch = preMatchJobOf(setting, task.job);
      if (preMatch) return { preMatch };
      return compileShared(payloadOf(task.job).match, setting.params, task.tables, scratch, task.fit);
    }
    case 'compile-whole': {
      const preMatch = preMatchJobOf(setting, task.job);
      if (preMatch) return { preMatch };
      return compileAndRunWhole(setting, scratch, task.job, task.tables, task.backend, task.fit);
    }
    case 'from-pre-match':
      return compileFromPreMatch(setting, task.job, task.preMatch);
    case 'from-pre-match-whole': {
      const compiled = compileFromPreMatch(setting, task.job, task.preMatch);
      return {
        compiled,
        finished: runWholeJob(setting, task.job, compiled, task.backend),
      } satisfies CompiledAndRun;
    }
    case 'whole':
      return runWholeJob(setting, task.job, adoptCompiled(task.compiled), task.backend);
    case 'finish':
      return finishJob(setting, task.job, adoptCompiled(task.compiled), task.counts, task.run);
    case 'fit':
      return marketFitOfInputs(task.match, setting.params, scratch.calibrations);
  }
}
