// The wire shapes of the simulation routes, built from the domain's values (src/simulations). Each
// view builds its fields in the order of its schema (src/http/schemas/simulations.ts).
import { creditsNumber, formatCredits, priceOfDrawsMilli } from '../../billing/amounts.js';
import { ApiError, type ErrorBody, errorBody } from '../../errors.js';
import type { Batch, Job, RejectedBatchItem } from '../../jobs/types.js';
import type { BatchResultItem } from '../../simulations/batch-results.js';
import {
  type BatchItemStatus,
  type BatchStatus,
  type BatchSummary,
  inSubmissionOrder,
} from '../../simulations/batch-status.js';
import type { DeliveredSimulation, JobOutcome } from '../../simulations/deliver.js';
import type { Page } from '../../simulations/listings.js';
import type { PathQuote } from '../../simulations/path-request.js';
import type { Quote } from '../../simulations/quote.js';
import type { RunPayload } from '../../simulations/run-payload.js';
import { BatchRejectedError, type BatchSubmission } from '../../simulations/submit-batch.js';
import { batchResultLineSchema, simulationSchema } from '../schemas/simulations.js';
import { type SplicedJson, serializeWithJsonField } from '../serialize.js';
import { selectSections } from './document-sections.js';

function resultUrl(jobId: string, reservationId: string): string {
  return `/v1/simulations/jobs/${jobId}?reservation_id=${reservationId}`;
}

/**
 * A 503 whose recovery names a job (settlement_unknown, or a delivery the database could not run) also
 * gives its result_url: reading it learns the one true outcome, with or without an Idempotency-Key
 * (docs/decisions.md §7). Other errors pass unchanged.
 */
export function withResultUrl(error: unknown): unknown {
  if (!(error instanceof ApiError) || error.status !== 503) return error;
  const recovery = error.options.recovery;
  const jobId = recovery?.job_id;
  const reservationId = recovery?.reservation_id;
  if (typeof jobId !== 'string' || typeof reservationId !== 'string') return error;
  return new ApiError(error.code, {
    ...error.options,
    message: error.message,
    recovery: { ...recovery, result_url: resultUrl(jobId, reservationId) },
  });
}

function jobPrice(job: Job) {
  return { draws: job.draws, credits: formatCredits(job.mode === 'live' ? job.priceMilli : 0) };
}

/** Milli-credits still held for a job: its price while a live job waits for delivery. */
function reservedMilli(job: Pick<Job, 'status' | 'mode' | 'priceMilli'>): number {
  const open = job.status === 'queued' || job.status === 'running' || job.status === 'succeeded';
  return job.mode === 'live' && open ? job.priceMilli : 0;
}

export function jobView(job: Job, retryAfterSeconds: number) {
  const payload = job.inputs as RunPayload | null;
  return {
    object: 'simulation_job' as const,
    job_id: job.id,
    fixture_id: job.fixtureId,
    reservation_id: job.reservationId,
    result_url: resultUrl(job.id, job.reservationId),
    status: job.status,
    price: jobPrice(job),
    credits_reserved: creditsNumber(reservedMilli(job)),
    retry_after_seconds: retryAfterSeconds,
    progress: { draws_done: job.drawsDone, draws_total: job.draws },
    scope: job.scope,
    livemode: job.mode === 'live',
    created_at: job.createdAt.toISOString(),
    ...(job.batchId ? { batch_id: job.batchId } : {}),
    ...(payload?.request ? { warnings: payload.request.warnings } : {}),
    custom_id: job.customId,
    metadata: job.metadata ?? {},
  };
}

/**
 * A delivery's fields but its document; given again (replayed) it shows the same delivery with nothing
 * charged this time. simulationWire adds the document.
 */
function simulationEnvelopeView({ job, delivery, replayed }: DeliveredSimulation) {
  const payload = job.inputs as RunPayload;
  const price = jobPrice(job);
  const charged = replayed ? 0 : creditsNumber(delivery.creditsChargedMilli);
  return {
    object: 'simulation' as const,
    id: delivery.id,
    fixture_id: job.fixtureId,
    state: payload.request.state,
    data_version: job.dataVersion,
    created_at: delivery.createdAt.toISOString(),
    livemode: job.mode === 'live',
    price,
    credits_charged: charged,
    scope: job.scope,
    inputs: payload.request.inputs,
    warnings: payload.request.warnings,
    receipt: {
      request_id: job.requestId,
      delivery_request_id: delivery.requestId,
      idempotency_key: job.idempotencyKey,
      price,
      credits_charged: charged,
      credits_remaining:
        delivery.creditsRemainingMilli === null ? null : creditsNumber(delivery.creditsRemainingMilli),
      inputs_hash: payload.request.inputs_hash,
      job_id: job.id,
      reservation_id: job.reservationId,
    },
    custom_id: job.customId,
    metadata: job.metadata ?? {},
  };
}

/**
 * A delivery as the wire carries it (the Simulation schema): its fields through the schema, then the
 * result's stored document as it is (results keep it serialised and deflated, src/results/result-store.ts).
 */
/** `include`: the document's sections to send (document-sections.ts); null or absent: every one. */
export function simulationWire(
  delivered: DeliveredSimulation,
  include: ReadonlySet<string> | null = null,
): SplicedJson {
  return serializeWithJsonField(
    simulationSchema,
    'simulation',
    simulationEnvelopeView(delivered),
    selectSections(delivered.result.document, include),
  );
}

/** 200 with the delivered simulation (serialised), or 202 with the job still pending. */
export function jobOutcomeView(outcome: JobOutcome, include: ReadonlySet<string> | null = null) {
  return outcome.kind === 'delivered'
    ? { status: 200 as const, wire: simulationWire(outcome.delivered, include) }
    : { status: 202 as const, body: jobView(outcome.job, outcome.retryAfterSeconds) };
}

export function quoteView(quote: Quote) {
  return {
    object: 'simulation_quote' as const,
    fixture_id: quote.fixtureId,
    price: { draws: quote.draws, credits: formatCredits(quote.priceMilli) },
    credits: creditsNumber(quote.priceMilli),
    credits_charged: 0 as const,
    rate_card: quote.rateCard,
    livemode: quote.livemode,
    scope: quote.scope,
    inputs: quote.inputs,
    warnings: quote.warnings,
    data_version: quote.dataVersion,
  };
}

/** A path's price: its minutes times the draws of each (docs/api.md §4.14). */
export function pathQuoteView(quote: PathQuote) {
  return {
    object: 'path_quote' as const,
    fixture_id: quote.fixtureId,
    steps: quote.steps,
    draws_per_step: quote.drawsPerStep,
    price: { draws: quote.steps * quote.drawsPerStep, credits: formatCredits(quote.priceMilli) },
    credits: creditsNumber(quote.priceMilli),
    credits_charged: 0 as const,
    rate_card: quote.rateCard,
    livemode: quote.livemode,
    data_version: quote.dataVersion,
  };
}

function batchPrice(draws: number, livemode: boolean) {
  return { draws, credits: formatCredits(livemode ? priceOfDrawsMilli(draws) : 0) };
}

/** A selector's fixture id as given (when it is one), for a rejected item. */
function selectorFixture(fixtureId: number | string | undefined): number | null {
  return typeof fixtureId === 'number' || typeof fixtureId === 'string' ? Number(fixtureId) || null : null;
}

function rejectedItemError(body: ErrorBody['error']) {
  return {
    code: body.code,
    message: body.message,
    param: body.param,
    recovery: body.recovery,
    doc_url: body.doc_url,
  };
}

/**
 * A batch none of whose items can run, as its 400: `recovery.items` carries each item's index, fixture
 * and error in the form the 202 gives a rejected item. Other errors pass unchanged.
 */
export function batchRejectionView(error: unknown, context: { requestId: string; docsUrl: string }): unknown {
  if (!(error instanceof BatchRejectedError)) return error;
  return new ApiError(error.code, {
    ...error.options,
    message: error.message,
    recovery: {
      items: error.items.map((item) => ({
        index: item.index,
        fixture: selectorFixture(item.selector.fixture_id),
        error: rejectedItemError(errorBody(item.error, context).error),
      })),
      next_step: 'Correct the items and submit the batch again; nothing was reserved or counted.',
    },
  });
}

type ViewContext = { requestId: string; docsUrl: string };

/** The fields every view of a batch starts with (docs/api.md §4.6). */
function batchHead(batch: Batch, summary: BatchSummary) {
  const livemode = batch.mode === 'live';
  return {
    object: 'simulation_batch' as const,
    batch_id: batch.id,
    status: summary.status,
    counts: summary.counts,
    livemode,
    price: batchPrice(batch.draws, livemode),
    metadata: batch.metadata,
    results_url: `/v1/simulations/batch/${batch.id}/results`,
    created_at: batch.createdAt.toISOString(),
    completed_at: summary.completedAt?.toISOString() ?? null,
    cancel_requested_at: batch.cancelRequestedAt?.toISOString() ?? null,
  };
}

/** A rejected item as the batch stored it; its doc_url is this service's. */
function storedItemError(item: RejectedBatchItem, context: Pick<ViewContext, 'docsUrl'>) {
  return { ...item.error, doc_url: `${context.docsUrl}#${item.error.code}` };
}

function rejectedItemView(item: RejectedBatchItem, context: ViewContext) {
  return {
    custom_id: item.custom_id,
    fixture: item.fixture,
    status: 'rejected' as const,
    credits_reserved: 0,
    error: storedItemError(item, context),
  };
}

function batchSubmissionView(submission: BatchSubmission, context: ViewContext) {
  let rejected = 0;
  const items = submission.items.map((item) => {
    if (item.kind === 'rejected')
      return rejectedItemView(submission.batch.rejectedItems[rejected++]!, context);
    const { job, run } = item;
    return {
      custom_id: job.customId,
      fixture: job.fixtureId,
      job_id: job.id,
      status: job.status === 'succeeded' ? ('succeeded' as const) : ('queued' as const),
      credits_reserved: creditsNumber(job.priceMilli),
      reservation_id: job.reservationId,
      result_url: resultUrl(job.id, job.reservationId),
      scope: job.scope,
      inputs: run.resolved.inputs,
      warnings: run.warnings,
    };
  });
  const queued = submission.items.flatMap((item) => (item.kind === 'queued' ? [item] : []));
  const deadlines = queued.map((item) => item.run.fixture.kickoff.getTime() - 1);
  return {
    ...batchHead(submission.batch, submission.summary),
    items,
    validUntil: deadlines.length > 0 ? Math.min(...deadlines) : null,
    credits_reserved_total: creditsNumber(queued.reduce((sum, item) => sum + item.job.priceMilli, 0)),
  };
}

function batchJobItemView({ job, freshness }: BatchItemStatus) {
  return {
    custom_id: job.customId,
    fixture: job.fixtureId,
    job_id: job.id,
    status: job.status,
    credits_reserved: creditsNumber(reservedMilli(job)),
    credits_charged: creditsNumber(job.creditsChargedMilli),
    reservation_id: job.reservationId,
    result_url: resultUrl(job.id, job.reservationId),
    progress: { draws_done: job.drawsDone, draws_total: job.draws },
    scope: job.scope,
    ...(freshness ? { freshness } : {}),
    ...(job.error ? { error: { code: job.error.code, message: job.error.message } } : {}),
  };
}

export function batchStatusView(status: BatchStatus, context: ViewContext) {
  const items = inSubmissionOrder(status.items, status.batch.rejectedItems).map((item) =>
    'job' in item ? batchJobItemView(item) : rejectedItemView(item, context),
  );
  const deadlines = status.items.flatMap((item) => (item.kickoff ? [item.kickoff.getTime() - 1] : []));
  const reserved = status.items.reduce((sum, { job }) => sum + reservedMilli(job), 0);
  return {
    ...batchHead(status.batch, status.summary),
    items,
    validUntil: deadlines.length > 0 ? Math.min(...deadlines) : null,
    credits_reserved_total: creditsNumber(reserved),
  };
}

export function batchView(result: BatchSubmission | BatchStatus, context: ViewContext) {
  return result.kind === 'submitted'
    ? batchSubmissionView(result, context)
    : batchStatusView(result, context);
}

/** A batch in a list: its head and what its open or undelivered items still hold. */
export function batchSummaryView({ batch, summary }: { batch: Batch; summary: BatchSummary }) {
  const held =
    batch.mode === 'live' ? summary.counts.queued + summary.counts.running + summary.counts.succeeded : 0;
  return {
    ...batchHead(batch, summary),
    credits_reserved_total: creditsNumber(held * priceOfDrawsMilli(batch.draws)),
  };
}

export function jobListView(page: Page<Job>, retryAfterSeconds: (job: Job) => number) {
  return {
    object: 'list' as const,
    url: '/v1/simulations/jobs' as const,
    data: page.data.map((job) => jobView(job, retryAfterSeconds(job))),
    has_more: page.hasMore,
  };
}

export function batchListView(page: Page<{ batch: Batch; summary: BatchSummary }>) {
  return {
    object: 'list' as const,
    url: '/v1/simulations/batches' as const,
    data: page.data.map(batchSummaryView),
    has_more: page.hasMore,
  };
}

/**
 * How the results stream's lines are written, as part of a settled stream's ETag (routes/simulation-reads.ts):
 * a tag stands for the lines' bytes without reading them, so raise this when a line or a delivery comes
 * to be written otherwise for the same facts (a field added, renamed or reordered), and clients' copies of
 * earlier lines stop being answered 304.
 */
export const RESULT_LINES_VERSION = 1;

/**
 * One line of the results stream (docs/api.md §4.10), serialised without its newline; a delivered item's
 * document spliced in.
 */
export function batchResultLine(
  item: BatchResultItem,
  context: ViewContext,
  include: ReadonlySet<string> | null = null,
): string | SplicedJson {
  if (item.kind === 'delivered') {
    return serializeWithJsonField(
      batchResultLineSchema,
      'simulation',
      jobResultLine(item.delivered.job),
      simulationWire(item.delivered, include),
    );
  }
  return JSON.stringify(batchResultLineSchema.parse(batchResultLineView(item, context)));
}

function batchResultLineView(item: Exclude<BatchResultItem, { kind: 'delivered' }>, context: ViewContext) {
  switch (item.kind) {
    case 'rejected':
      return {
        object: 'simulation_batch_result' as const,
        custom_id: item.item.custom_id,
        fixture: item.item.fixture,
        job_id: null,
        status: 'rejected',
        error: storedItemError(item.item, context),
      };
    case 'pending':
      return jobResultLine(item.job);
    case 'ended':
      return {
        ...jobResultLine(item.job),
        error: rejectedItemError(errorBody(item.error, context).error),
      };
  }
}

/** The fields of a stream line that come from its job, in the line's key order. */
function jobResultLine(job: Job) {
  return {
    object: 'simulation_batch_result' as const,
    custom_id: job.customId,
    fixture: job.fixtureId,
    job_id: job.id,
    status: job.status,
  };
}
