// What subscribers pay for (spec 4.3-4.5, 4.8, decisions 2, 3, 5, 6, 7): quotes, single runs, batches,
// and the result path. Routes validate the request shape and call these functions; money moves only
// through the ledger, jobs only through the queue, each in the transaction that belongs to it.
import { createHash } from 'node:crypto';
import { creditsNumber, formatCredits, priceOfDrawsMilli } from '../billing/amounts.js';
import type { Ledger } from '../billing/ledger.js';
import type { Sql } from '../db/connection.js';
import { defaultModelParams } from '../engine/contract/model-params.js';
import type { JobPayload } from '../engine/runner.js';
import { ApiError, errorBody } from '../errors.js';
import { getFixtureForSale } from '../fixtures/fixture-access.js';
import { findFixturesByTeams, recordFixtureSummary } from '../fixtures/fixture-list.js';
import { type FixtureWithInputs, loadFixtureHeaders } from '../fixtures/fixture-record.js';
import { freshnessOf, isRefreshing } from '../fixtures/freshness.js';
import { type LineupsRequest, type ResolvedLineups, resolveLineups } from '../fixtures/lineups.js';
import { buildMatchInputs } from '../fixtures/match-inputs.js';
import type { AuthContext } from '../http/auth.js';
import type { IdempotencyRecord } from '../http/idempotency.js';
import { newId } from '../ids.js';
import type { UsageLimits } from '../limits/usage.js';
import type { Job, JobQueue, NewJob } from './queue.js';
import type { DeliveryContext, ResultStore } from './results.js';

/** The price revision quotes carry (spec 2.5): one credit per 1,000 draws. */
export const RATE_CARD = '2026-11-01';
/** Queued jobs beyond which new submissions answer engine_overloaded. */
export const QUEUE_BOUND = 20_000;
export const DEFAULT_DRAWS = 1000;
export const DEFAULT_WAIT_SECONDS = 25;

export interface FixtureSelector {
  fixture_id?: number | string | undefined;
  home?: string | undefined;
  away?: string | undefined;
  date?: string | undefined;
  lineups?: LineupsRequest | undefined;
}

export interface SimulationRequest extends FixtureSelector {
  draws?: number | undefined;
  wait_seconds?: number | undefined;
}

export interface BatchRequest {
  fixtures: FixtureSelector[];
  draws?: number | undefined;
}

export interface CallContext {
  auth: AuthContext;
  requestId: string;
  idempotencyKey: string | null;
  /** The idempotency record of this attempt, when the request carries a key. */
  idempotency: IdempotencyRecord | null;
}

export interface EngineGate {
  estimateSeconds(draws: number): number;
  /** Throws engine_cold_start / engine_unavailable when new work cannot be taken. */
  assertAvailable(): void;
}

export interface SimulationServiceDeps {
  sql: Sql;
  ledger: Ledger;
  queue: JobQueue;
  results: ResultStore;
  usage: UsageLimits;
  attachJob: (
    tx: Parameters<JobQueue['enqueue']>[0],
    record: IdempotencyRecord,
    created: { jobId: string } | { batchId: string },
  ) => Promise<void>;
  engine: EngineGate;
  clock: () => Date;
  docsUrl: string;
  onCharged?: (milli: number, livemode: boolean) => void;
  /** Queued jobs beyond which submissions answer engine_overloaded (default QUEUE_BOUND). */
  queueBound?: number;
}

/** What the job keeps for its delivery, beside the engine's inputs (jobs.inputs). */
interface StoredJobPayload extends JobPayload {
  request: {
    state: string;
    inputs: ResolvedLineups['inputs'];
    warnings: string[];
    inputs_hash: string;
  };
}

interface PreparedRun {
  fixture: FixtureWithInputs;
  resolved: ResolvedLineups;
  payload: StoredJobPayload;
  cacheKey: string;
  seed: string;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

export function resultUrl(jobId: string, reservationId: string): string {
  return `/v1/simulations/jobs/${jobId}?reservation_id=${reservationId}`;
}

function parseFixtureId(value: number | string, param: string): number {
  const id =
    typeof value === 'number' ? value : /^\d{1,15}$/.test(value.trim()) ? Number(value.trim()) : Number.NaN;
  if (!Number.isSafeInteger(id) || id < 1) {
    throw new ApiError('parameter_invalid', {
      param,
      message: `\`${param}\` must be an integer of at least 1.`,
    });
  }
  return id;
}

export function makeSimulationService(deps: SimulationServiceDeps) {
  const { sql, ledger, queue, results, usage, clock } = deps;
  const modelVersion = defaultModelParams.model_version;

  /** Fixture by id, or by team names and optional date (spec 4.3). */
  async function resolveFixture(selector: FixtureSelector, prefix: string): Promise<FixtureWithInputs> {
    const now = clock();
    const param = (name: string) => (prefix ? `${prefix}.${name}` : name);
    if (selector.fixture_id !== undefined) {
      if (selector.home !== undefined || selector.away !== undefined || selector.date !== undefined) {
        throw new ApiError('parameter_invalid', {
          param: param('fixture_id'),
          message: 'Send either fixture_id or home/away (and date), not both.',
        });
      }
      return getFixtureForSale(sql, parseFixtureId(selector.fixture_id, param('fixture_id')), now);
    }
    if (selector.home === undefined) {
      throw new ApiError('parameter_missing', {
        param: param('home'),
        message: 'Send fixture_id, or home and away.',
      });
    }
    if (selector.away === undefined) {
      throw new ApiError('parameter_missing', {
        param: param('away'),
        message: 'Send fixture_id, or home and away.',
      });
    }
    const candidates = await findFixturesByTeams(sql, {
      home: selector.home,
      away: selector.away,
      date: selector.date,
      now,
    });
    if (candidates.length === 0) {
      throw new ApiError('fixture_not_found', {
        message: `No ${selector.date ? `fixture on ${selector.date}` : 'upcoming fixture'} of ${selector.home} v ${selector.away}.`,
        param: param('home'),
        recovery: {
          next_step: 'Check the team names (full or short) and the date against GET /v1/fixtures.',
        },
      });
    }
    // A fixture being reloaded may be changing its kick-off or teams: the match cannot be proven unique.
    const records = await loadFixtureHeaders(
      sql,
      candidates.map((c) => c.fixture_id),
    );
    for (const candidate of candidates) {
      const record = records.get(candidate.fixture_id);
      if (record && isRefreshing(record, now)) {
        throw new ApiError('fixture_lookup_incomplete', {
          message: `Fixture ${candidate.fixture_id} of this pairing is being refreshed; the lookup cannot prove a unique match.`,
          retryAfterSeconds: 1,
          recovery: { next_step: 'Retry shortly, or send the fixture_id.' },
        });
      }
    }
    if (candidates.length > 1) {
      throw new ApiError('fixture_ambiguous', {
        message: `${candidates.length} fixtures match ${selector.home} v ${selector.away}; choose one.`,
        param: param('home'),
        recovery: {
          candidates: candidates.map((c) => ({
            fixture_id: c.fixture_id,
            kickoff: c.kickoff,
            home: c.home.name,
            away: c.away.name,
            competition: c.competition.name,
          })),
          next_step: 'Send the fixture_id of one candidate, or add `date`.',
        },
      });
    }
    return getFixtureForSale(sql, candidates[0]!.fixture_id, now);
  }

  /** Lineups of decisions 5, with the custom-lineup cooldown of decisions 3 around them. */
  async function resolveRunLineups(
    auth: AuthContext,
    fixture: FixtureWithInputs,
    lineups: LineupsRequest | undefined,
    prefix: string,
  ): Promise<ResolvedLineups> {
    const custom = lineups?.home?.source === 'custom' || lineups?.away?.source === 'custom';
    if (custom) await usage.checkLineupCooldown(auth.org.id);
    try {
      return resolveLineups(fixture, lineups, prefix ? `${prefix}.lineups` : 'lineups');
    } catch (error) {
      if (
        custom &&
        error instanceof ApiError &&
        (error.code === 'lineup_invalid' || error.code === 'player_not_in_squad')
      ) {
        await usage.recordLineupFailure(auth.org.id);
      }
      throw error;
    }
  }

  async function prepare(
    auth: AuthContext,
    selector: FixtureSelector,
    draws: number,
    prefix: string,
  ): Promise<PreparedRun> {
    const fixture = await resolveFixture(selector, prefix);
    const resolved = await resolveRunLineups(auth, fixture, selector.lineups, prefix);
    const match = buildMatchInputs(fixture, resolved.lineups);
    // Identical shared inputs reuse one result (decisions 6); the seed follows the inputs, so the same
    // inputs give the same document. Test keys run on the CPU engine and keep their own results.
    const identity = JSON.stringify({ inputs: resolved.inputsForScope, draws, model: modelVersion });
    const inputsHash = sha256(identity);
    const cacheKey = sha256(
      `${auth.mode}:${resolved.scope === 'private' ? auth.org.id : 'shared'}:${identity}`,
    );
    return {
      fixture,
      resolved,
      cacheKey,
      seed: inputsHash.slice(0, 16),
      payload: {
        match,
        as_of: fixture.inputsAsOf.toISOString(),
        request: {
          state: fixture.state,
          inputs: resolved.inputs,
          warnings: resolved.warnings,
          inputs_hash: `sha256:${inputsHash}`,
        },
      },
    };
  }

  function priceView(auth: AuthContext, draws: number) {
    const milli = auth.livemode ? priceOfDrawsMilli(draws) : 0;
    return { draws, credits: formatCredits(milli) };
  }

  function jobView(job: Job) {
    const payload = job.inputs as StoredJobPayload;
    const remainingDraws = Math.max(0, job.draws - job.drawsDone);
    const retryAfter = Math.min(25, Math.max(1, Math.ceil(deps.engine.estimateSeconds(remainingDraws) * 2)));
    return {
      object: 'simulation_job' as const,
      job_id: job.id,
      fixture_id: job.fixtureId,
      reservation_id: job.reservationId,
      result_url: resultUrl(job.id, job.reservationId),
      status: job.status,
      price: { draws: job.draws, credits: formatCredits(job.mode === 'live' ? job.priceMilli : 0) },
      credits_reserved: creditsNumber(
        job.mode === 'live' && ['queued', 'running', 'succeeded'].includes(job.status) ? job.priceMilli : 0,
      ),
      retry_after_seconds: retryAfter,
      progress: { draws_done: job.drawsDone, draws_total: job.draws },
      scope: job.scope,
      livemode: job.mode === 'live',
      created_at: job.createdAt.toISOString(),
      ...(job.batchId ? { batch_id: job.batchId } : {}),
      ...(payload?.request ? { warnings: payload.request.warnings } : {}),
    };
  }

  function buildDelivery(context: DeliveryContext, balanceAfter: number | null) {
    const { job, result } = context;
    const payload = job.inputs as StoredJobPayload;
    const price = { draws: job.draws, credits: formatCredits(job.mode === 'live' ? job.priceMilli : 0) };
    const charged = creditsNumber(context.creditsChargedMilli);
    return {
      object: 'simulation' as const,
      id: context.deliveryId,
      fixture_id: job.fixtureId,
      state: payload.request.state,
      data_version: job.dataVersion,
      created_at: context.createdAt.toISOString(),
      livemode: job.mode === 'live',
      price,
      credits_charged: charged,
      scope: job.scope,
      inputs: payload.request.inputs,
      warnings: payload.request.warnings,
      receipt: {
        request_id: context.job.requestId,
        delivery_request_id: null as string | null,
        idempotency_key: job.idempotencyKey,
        price,
        credits_charged: charged,
        credits_remaining: balanceAfter === null ? null : creditsNumber(balanceAfter),
        inputs_hash: payload.request.inputs_hash,
        job_id: job.id,
        reservation_id: job.reservationId,
      },
      simulation: result.document,
    };
  }

  /** Settles and delivers a finished job (or gives its delivery again); null while it is pending. */
  async function deliver(ctx: CallContext, job: Job): Promise<{ status: 200 | 202; body: unknown }> {
    const outcome = await results.deliverJob({
      orgId: ctx.auth.org.id,
      jobId: job.id,
      reservationId: job.reservationId,
      requestId: ctx.requestId,
      idempotencyKey: ctx.idempotencyKey,
      async buildResponse(context) {
        const balance =
          context.job.mode === 'live' ? await ledger.balance(context.job.orgId, { tx: context.tx }) : null;
        const body = buildDelivery(context, balance ? balance.available : null);
        body.receipt.delivery_request_id = ctx.requestId;
        return body;
      },
    });
    if (outcome.status === 'pending') return { status: 202, body: jobView(outcome.job) };
    const body = outcome.delivery.response as ReturnType<typeof buildDelivery>;
    if (outcome.replayed) {
      // decisions 6: the same delivery again, charging nothing this time.
      return {
        status: 200,
        body: { ...body, credits_charged: 0, receipt: { ...body.receipt, credits_charged: 0 } },
      };
    }
    if (outcome.delivery.creditsChargedMilli > 0)
      deps.onCharged?.(outcome.delivery.creditsChargedMilli, true);
    if (outcome.job.scope === 'shared' && outcome.job.mode === 'live')
      await recordSummary(body).catch(() => {});
    return { status: 200, body };
  }

  async function recordSummary(body: ReturnType<typeof buildDelivery>) {
    const document = body.simulation as {
      result: { home_win: number; draw: number; away_win: number };
      goals: { expected: { home: number; away: number } };
    };
    await recordFixtureSummary(sql, {
      fixtureId: body.fixture_id,
      dataVersion: body.data_version,
      simulationId: body.id,
      createdAt: new Date(body.created_at),
      draws: body.price.draws,
      homeWin: document.result.home_win,
      draw: document.result.draw,
      awayWin: document.result.away_win,
      expectedGoals: { home: document.goals.expected.home, away: document.goals.expected.away },
    });
  }

  async function assertQueueHasRoom() {
    deps.engine.assertAvailable();
    const [row] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM jobs WHERE status = 'queued'`;
    if ((row?.n ?? 0) >= (deps.queueBound ?? QUEUE_BOUND)) {
      throw new ApiError('engine_overloaded', {
        message: `The simulation queue holds ${row!.n} jobs; try again shortly.`,
        retryAfterSeconds: 5,
      });
    }
  }

  function newJobFor(ctx: CallContext, run: PreparedRun, draws: number, extra: Partial<NewJob>): NewJob {
    return {
      orgId: ctx.auth.org.id,
      mode: ctx.auth.mode,
      reservationId: newId('res'),
      fixtureId: run.fixture.fixtureId,
      dataVersion: run.fixture.dataVersion,
      draws,
      seed: run.seed,
      inputs: run.payload,
      cacheKey: run.cacheKey,
      scope: run.resolved.scope,
      priceMilli: ctx.auth.livemode ? priceOfDrawsMilli(draws) : 0,
      requestId: ctx.requestId,
      idempotencyKey: ctx.idempotencyKey,
      ...extra,
    };
  }

  async function quote(auth: AuthContext, request: SimulationRequest) {
    const draws = request.draws ?? DEFAULT_DRAWS;
    const run = await prepare(auth, request, draws, '');
    const milli = auth.livemode ? priceOfDrawsMilli(draws) : 0;
    return {
      object: 'simulation_quote' as const,
      fixture_id: run.fixture.fixtureId,
      price: { draws, credits: formatCredits(milli) },
      credits: creditsNumber(milli),
      credits_charged: 0,
      rate_card: RATE_CARD,
      livemode: auth.livemode,
      scope: run.resolved.scope,
      inputs: run.resolved.inputs,
      warnings: run.resolved.warnings,
      data_version: run.fixture.dataVersion,
    };
  }

  async function submit(
    ctx: CallContext,
    request: SimulationRequest,
  ): Promise<{ status: 200 | 202; body: unknown }> {
    const draws = request.draws ?? DEFAULT_DRAWS;
    const waitMs = (request.wait_seconds ?? DEFAULT_WAIT_SECONDS) * 1000;
    // A retry of an attempt that created its job (settlement unconfirmed, or the process stopped):
    // the same job and hold give the one true outcome (decisions 7).
    const earlier = ctx.idempotency?.jobId ? await queue.get(ctx.idempotency.jobId) : null;
    if (earlier) return finish(ctx, earlier, waitMs);

    const run = await prepare(ctx.auth, request, draws, '');
    const cached = await results.findCached({
      cacheKey: run.cacheKey,
      scope: run.resolved.scope,
      orgId: ctx.auth.org.id,
    });
    if (!cached) await assertQueueHasRoom();
    const job = await sql.begin(async (tx) => {
      const admission = await usage.admitSubmission(tx, {
        org: { id: ctx.auth.org.id, plan: ctx.auth.org.plan, limitOverrides: ctx.auth.org.limitOverrides },
        kind: 'simulation',
        gpuSecondsEstimates: cached || !ctx.auth.livemode ? [] : [deps.engine.estimateSeconds(draws)],
        opensJob: !cached,
      });
      const reservationId = newId('res');
      if (ctx.auth.livemode) {
        await ledger.reserve(ctx.auth.org.id, priceOfDrawsMilli(draws), {
          holdId: reservationId,
          requestId: ctx.requestId,
          idempotencyKey: ctx.idempotencyKey,
          tx,
        });
      }
      const created = await queue.enqueue(
        tx,
        newJobFor(ctx, run, draws, {
          reservationId,
          usageDay: admission.day,
          gpuSecondsReserved: admission.gpuSecondsReserved[0] ?? 0,
          cachedResultId: cached?.id ?? null,
        }),
      );
      if (ctx.idempotency) await deps.attachJob(tx, ctx.idempotency, { jobId: created.id });
      return created;
    });
    return finish(ctx, job, waitMs);
  }

  async function finish(
    ctx: CallContext,
    job: Job,
    waitMs: number,
  ): Promise<{ status: 200 | 202; body: unknown }> {
    let current: Job | null = job;
    if ((job.status === 'queued' || job.status === 'running') && waitMs > 0)
      current = await queue.waitFor(job.id, waitMs);
    if (!current) throw new ApiError('resource_missing', { message: `No simulation job ${job.id}.` });
    if (current.status === 'queued' || current.status === 'running')
      return { status: 202, body: jobView(current) };
    return deliver(ctx, current);
  }

  /** The result path (decisions 6). */
  async function result(ctx: CallContext, jobId: string, reservationId: string) {
    const job = await queue.get(jobId);
    if (
      !job ||
      job.orgId !== ctx.auth.org.id ||
      job.reservationId !== reservationId ||
      job.mode !== ctx.auth.mode
    ) {
      throw new ApiError('resource_missing', {
        message: `No simulation job ${jobId} with reservation ${reservationId}.`,
      });
    }
    return deliver(ctx, job);
  }

  async function submitBatch(ctx: CallContext, request: BatchRequest) {
    const draws = request.draws ?? DEFAULT_DRAWS;
    if (ctx.idempotency?.batchId) {
      const existing = await batchStatus(ctx, ctx.idempotency.batchId);
      return existing;
    }
    // Distinct selectors (spec 4.5).
    const seen = new Map<string, number>();
    request.fixtures.forEach((selector, index) => {
      const key = JSON.stringify([
        selector.fixture_id === undefined ? null : String(selector.fixture_id).trim(),
        selector.home?.toLowerCase().trim() ?? null,
        selector.away?.toLowerCase().trim() ?? null,
        selector.date ?? null,
        selector.lineups ?? null,
      ]);
      const first = seen.get(key);
      if (first !== undefined) {
        throw new ApiError('parameter_invalid', {
          param: `fixtures.${index}`,
          message: `fixtures.${index} repeats fixtures.${first}; batch selectors must be distinct.`,
        });
      }
      seen.set(key, index);
    });
    // Every item is validated before anything is reserved; an item that cannot run carries its error.
    const prepared: Array<{ run: PreparedRun } | { error: ApiError }> = [];
    for (const [index, selector] of request.fixtures.entries()) {
      try {
        prepared.push({ run: await prepare(ctx.auth, selector, draws, `fixtures.${index}`) });
      } catch (error) {
        if (!(error instanceof ApiError) || error.status >= 500 || error.status === 429) throw error;
        prepared.push({ error });
      }
    }
    const runs = prepared.flatMap((item) => ('run' in item ? [item.run] : []));
    const cachedIds = new Map<string, number>();
    for (const run of runs) {
      if (cachedIds.has(run.cacheKey)) continue;
      const cached = await results.findCached({
        cacheKey: run.cacheKey,
        scope: run.resolved.scope,
        orgId: ctx.auth.org.id,
      });
      if (cached) cachedIds.set(run.cacheKey, cached.id);
    }
    const toRun = runs.filter((run) => !cachedIds.has(run.cacheKey));
    if (toRun.length > 0) await assertQueueHasRoom();

    const { batch, jobs } = await sql.begin(async (tx) => {
      const admission = await usage.admitSubmission(tx, {
        org: { id: ctx.auth.org.id, plan: ctx.auth.org.plan, limitOverrides: ctx.auth.org.limitOverrides },
        kind: 'batch',
        gpuSecondsEstimates: ctx.auth.livemode ? toRun.map(() => deps.engine.estimateSeconds(draws)) : [],
        opensJob: toRun.length > 0,
      });
      let reservedIndex = 0;
      const newJobs: NewJob[] = [];
      for (const run of runs) {
        const reservationId = newId('res');
        const cachedResultId = cachedIds.get(run.cacheKey) ?? null;
        newJobs.push(
          newJobFor(ctx, run, draws, {
            reservationId,
            usageDay: admission.day,
            gpuSecondsReserved:
              cachedResultId === null && ctx.auth.livemode
                ? (admission.gpuSecondsReserved[reservedIndex++] ?? 0)
                : 0,
            cachedResultId,
          }),
        );
      }
      if (ctx.auth.livemode && newJobs.length > 0) {
        // One guarded reservation per item, all in this transaction: the whole batch is covered or
        // nothing is held.
        for (const job of newJobs) {
          await ledger.reserve(ctx.auth.org.id, job.priceMilli, {
            holdId: job.reservationId,
            requestId: ctx.requestId,
            idempotencyKey: ctx.idempotencyKey,
            tx,
          });
        }
      }
      const created = await queue.enqueueBatch(
        tx,
        {
          orgId: ctx.auth.org.id,
          mode: ctx.auth.mode,
          draws,
          requestId: ctx.requestId,
          idempotencyKey: ctx.idempotencyKey,
        },
        newJobs,
      );
      if (ctx.idempotency) await deps.attachJob(tx, ctx.idempotency, { batchId: created.batch.id });
      return created;
    });

    let jobIndex = 0;
    const items = prepared.map((item, index) => {
      const selector = request.fixtures[index]!;
      if ('error' in item) {
        const body = errorBody(item.error, { requestId: ctx.requestId, docsUrl: deps.docsUrl }).error;
        return {
          fixture:
            typeof selector.fixture_id === 'number' || typeof selector.fixture_id === 'string'
              ? Number(selector.fixture_id) || null
              : null,
          status: 'rejected' as const,
          credits_reserved: 0,
          error: {
            code: body.code,
            message: body.message,
            param: body.param,
            recovery: body.recovery,
            doc_url: body.doc_url,
          },
        };
      }
      const job = jobs[jobIndex++]!;
      return {
        fixture: job.fixtureId,
        job_id: job.id,
        status: job.status === 'succeeded' ? ('succeeded' as const) : ('queued' as const),
        credits_reserved: creditsNumber(job.priceMilli),
        reservation_id: job.reservationId,
        result_url: resultUrl(job.id, job.reservationId),
        scope: job.scope,
        inputs: item.run.resolved.inputs,
        warnings: item.run.resolved.warnings,
      };
    });
    const deadlines = prepared.flatMap((item) =>
      'run' in item ? [item.run.fixture.kickoff.getTime() - 1] : [],
    );
    return {
      status: 202 as const,
      body: {
        object: 'simulation_batch' as const,
        batch_id: batch.id,
        livemode: ctx.auth.livemode,
        price: priceView(ctx.auth, draws),
        items,
        validUntil: deadlines.length > 0 ? Math.min(...deadlines) : null,
        credits_reserved_total: creditsNumber(jobs.reduce((sum, job) => sum + job.priceMilli, 0)),
        created_at: batch.createdAt.toISOString(),
      },
    };
  }

  async function batchStatus(ctx: CallContext, batchId: string) {
    const found = await queue.getBatch(batchId);
    if (!found || found.batch.orgId !== ctx.auth.org.id || found.batch.mode !== ctx.auth.mode) {
      throw new ApiError('resource_missing', { message: `No batch ${batchId}.` });
    }
    const now = clock();
    const fixtures = await loadFixtureHeaders(
      sql,
      found.items.map((item) => item.fixtureId),
    );
    const items = found.items.map((item) => {
      const fixture = fixtures.get(item.fixtureId);
      const freshness = fixture ? freshnessOf(fixture, now) : null;
      return {
        fixture: item.fixtureId,
        job_id: item.id,
        status: item.status,
        credits_reserved: creditsNumber(
          item.mode === 'live' && ['queued', 'running', 'succeeded'].includes(item.status)
            ? item.priceMilli
            : 0,
        ),
        credits_charged: creditsNumber(item.creditsChargedMilli),
        reservation_id: item.reservationId,
        result_url: resultUrl(item.id, item.reservationId),
        progress: { draws_done: item.drawsDone, draws_total: item.draws },
        scope: item.scope,
        ...(freshness ? { freshness } : {}),
        ...(item.error ? { error: { code: item.error.code, message: item.error.message } } : {}),
      };
    });
    const open = found.items.filter((item) => ['queued', 'running', 'succeeded'].includes(item.status));
    const deadlines = found.items.flatMap((item) => {
      const fixture = fixtures.get(item.fixtureId);
      return fixture ? [fixture.kickoff.getTime() - 1] : [];
    });
    return {
      status: 200 as const,
      body: {
        object: 'simulation_batch' as const,
        batch_id: found.batch.id,
        livemode: found.batch.mode === 'live',
        price: {
          draws: found.batch.draws,
          credits: formatCredits(found.batch.mode === 'live' ? priceOfDrawsMilli(found.batch.draws) : 0),
        },
        items,
        validUntil: deadlines.length > 0 ? Math.min(...deadlines) : null,
        credits_reserved_total: creditsNumber(
          open.reduce((sum, item) => sum + (item.mode === 'live' ? item.priceMilli : 0), 0),
        ),
        created_at: found.batch.createdAt.toISOString(),
      },
    };
  }

  return { quote, submit, submitBatch, result, batchStatus, resolveFixture };
}

export type SimulationService = ReturnType<typeof makeSimulationService>;
