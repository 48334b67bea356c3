// Season projections on the wire (docs/api.md §2.10, §2.11): the quote, the job (202) and a delivered
// projection, its stored content wrapped in its delivery's facts.
import { creditsNumber, formatCredits } from '../../billing/amounts.js';
import type { DeliveredProjection } from '../../projections/deliver.js';
import type { ProjectionJob } from '../../projections/projection-store.js';
import type { ProjectionQuote } from '../../projections/quote.js';

export function projectionResultUrl(job: Pick<ProjectionJob, 'id' | 'reservationId'>): string {
  return `/v1/projections/jobs/${job.id}?reservation_id=${job.reservationId}`;
}

function price(seasons: number, remainingFixtures: number, milli: number) {
  return { seasons, remaining_fixtures: remainingFixtures, credits: formatCredits(milli) };
}

function jobPrice(job: ProjectionJob) {
  return price(job.seasons, job.inputs.remaining.length, job.priceMilli);
}

export function projectionQuoteView(quote: ProjectionQuote) {
  return {
    object: 'projection_quote' as const,
    competition_id: quote.competitionId,
    price: price(quote.seasons, quote.remainingFixtures, quote.priceMilli),
    credits: creditsNumber(quote.priceMilli),
    credits_charged: 0 as const,
    rate_card: quote.rateCard,
    livemode: quote.livemode,
    data_version: quote.dataVersion,
  };
}

export function projectionJobView(job: ProjectionJob, retryAfterSeconds: number) {
  const open = job.status === 'queued' || job.status === 'running' || job.status === 'succeeded';
  return {
    object: 'projection_job' as const,
    job_id: job.id,
    competition_id: job.competitionId,
    reservation_id: job.reservationId,
    result_url: projectionResultUrl(job),
    status: job.status,
    price: jobPrice(job),
    credits_reserved: creditsNumber(open ? job.priceMilli : 0),
    retry_after_seconds: retryAfterSeconds,
    livemode: job.mode === 'live',
    created_at: job.createdAt.toISOString(),
  };
}

/** A delivery: a replay (given again, or read by id) shows credits_charged 0, its receipt what was charged. */
export function projectionView({ job, delivery, replayed }: DeliveredProjection) {
  const content = job.result;
  if (!content) throw new Error(`projection job ${job.id} has no result`);
  const charged = creditsNumber(delivery.creditsChargedMilli);
  return {
    object: 'season_projection' as const,
    id: delivery.id,
    competition: content.competition,
    as_of: content.as_of,
    data_version: content.data_version,
    seasons: content.seasons,
    played_fixtures: content.played_fixtures,
    remaining_fixtures: content.remaining_fixtures,
    livemode: job.mode === 'live',
    created_at: delivery.createdAt.toISOString(),
    credits_charged: replayed ? 0 : charged,
    receipt: {
      request_id: job.requestId,
      delivery_request_id: delivery.requestId,
      idempotency_key: job.idempotencyKey,
      price: jobPrice(job),
      credits_charged: charged,
      credits_remaining:
        delivery.creditsRemainingMilli === null ? null : creditsNumber(delivery.creditsRemainingMilli),
      job_id: job.id,
      reservation_id: job.reservationId,
    },
    model: content.model,
    rules: content.rules,
    zones: content.zones,
    teams: content.teams,
  };
}
