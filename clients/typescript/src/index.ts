// A typed client of the matchsim API: openapi-fetch over the types generated from /openapi.json
// (schema.ts, `npm run client:generate`), with an API key, an Idempotency-Key on every run and batch,
// retries that follow the error's retry advice and Retry-After, and helpers to wait for a job, to stream
// a batch's results line by line and to page through the lists. Errors are typed: `error.error.code` is
// one of the documented codes. Built to JavaScript with declarations (`npm pack` in clients/typescript);
// README.md shows it in use.
import createClient, { type Client, type Middleware } from 'openapi-fetch';
import type { components, operations, paths } from './schema.js';

export type { components, operations, paths } from './schema.js';
export { verifyWebhook, type WebhookEvent, WebhookSignatureError } from './webhooks.js';
export type Schemas = components['schemas'];
export type ApiErrorObject = Schemas['Error']['error'];
export type Simulation = Schemas['Simulation'];
export type SimulationJob = Schemas['SimulationJob'];
export type Batch = Schemas['Batch'];
export type SeasonProjection = Schemas['SeasonProjection'];
export type ProjectionJob = Schemas['ProjectionJob'];
/** A batch in a list: the batch without its items. */
export type BatchSummary = Schemas['BatchList']['data'][number];
export type MatchsimClient = Client<paths>;
/** The document's sections, for `include` (docs/api.md §2.3, "Choosing sections"). */
export type Section = Exclude<keyof Schemas['SimulationDocument'], 'schema'>;

export interface RetryOptions {
  /** Attempts in all, the first included; default 4. */
  attempts?: number;
  /** First backoff when the answer names no delay, in milliseconds; doubled each time; default 500. */
  baseDelayMs?: number;
  /** Longest single wait, in milliseconds; default 30,000. */
  maxDelayMs?: number;
}

export interface ClientOptions {
  baseUrl: string;
  apiKey: string;
  /** Retries of retryable answers (429, 503, …); `false` turns them off. */
  retry?: RetryOptions | false;
  fetch?: typeof fetch;
}

/** An error answer, thrown by the helpers; `error` is the documented error object. */
export class MatchsimError extends Error {
  override name = 'MatchsimError';
  constructor(
    readonly status: number,
    readonly error: ApiErrorObject,
  ) {
    super(`${status} ${error.code}: ${error.message}`);
  }
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(signal.reason);
    });
  });

/** The answer's retry advice: how long to wait before sending again, or null when it must not be sent again. */
export async function retryDelayMs(
  request: Request,
  response: Response,
  attempt: number,
  options: Required<RetryOptions>,
): Promise<number | null> {
  if (response.status !== 429 && response.status < 500) return null;
  const body = (await response
    .clone()
    .json()
    .catch(() => null)) as { error?: ApiErrorObject } | null;
  const advice = body?.error?.retry;
  if (!advice?.retryable || advice.strategy !== 'backoff_with_jitter') return null;
  // Sending again is safe when nothing happened (429), the request reads, or it carries its Idempotency-Key.
  const safe = response.status === 429 || request.method === 'GET' || request.headers.has('idempotency-key');
  if (!safe) return null;
  const header = Number(response.headers.get('retry-after'));
  const namedSeconds = Math.max(Number.isFinite(header) ? header : 0, advice.after_seconds ?? 0);
  const backoff = options.baseDelayMs * 2 ** (attempt - 1) * (0.5 + Math.random() / 2);
  return Math.min(options.maxDelayMs, namedSeconds > 0 ? namedSeconds * 1000 : backoff);
}

/** A fetch that sends a request again while its answer advises a retry (docs/api.md §7). */
export function retryingFetch(base: typeof fetch, retry: RetryOptions = {}): typeof fetch {
  const options = { attempts: 4, baseDelayMs: 500, maxDelayMs: 30_000, ...retry };
  return async (input, init) => {
    const request = new Request(input, init);
    for (let attempt = 1; ; attempt += 1) {
      const response = await base(request.clone());
      if (attempt >= options.attempts) return response;
      const delay = await retryDelayMs(request, response, attempt, options);
      if (delay === null) return response;
      await response.body?.cancel();
      await sleep(delay, request.signal);
    }
  };
}

/** Runs and batches carry an Idempotency-Key, so that a retry never runs or charges twice. */
const idempotencyKeys: Middleware = {
  onRequest({ request, schemaPath }) {
    const creates = schemaPath === '/v1/simulations' || schemaPath === '/v1/simulations/batch';
    if (request.method === 'POST' && creates && !request.headers.has('idempotency-key')) {
      request.headers.set('Idempotency-Key', crypto.randomUUID());
    }
    return request;
  },
};

export function createMatchsimClient(options: ClientOptions): MatchsimClient {
  const base = options.fetch ?? globalThis.fetch;
  const client = createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/$/, ''),
    headers: { Authorization: `Bearer ${options.apiKey}` },
    fetch: options.retry === false ? base : retryingFetch(base, options.retry),
  });
  client.use(idempotencyKeys);
  return client;
}

/** The data of an answer, or its error thrown as a MatchsimError. */
export function unwrap<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (result.error !== undefined || result.data === undefined) {
    const error = (result.error as { error?: ApiErrorObject } | undefined)?.error;
    if (error) throw new MatchsimError(result.response.status, error);
    throw new Error(`${result.response.status} without a body`);
  }
  return result.data;
}

export interface WaitOptions {
  signal?: AbortSignal;
  /** Called with each 202's job while it runs. */
  onProgress?: (job: SimulationJob) => void;
}

/** Follows a job's result path until it delivers (200) the simulation; honours retry_after_seconds. */
export async function waitForJob(
  client: MatchsimClient,
  job: Pick<SimulationJob, 'job_id' | 'reservation_id'>,
  options: WaitOptions = {},
): Promise<Simulation> {
  for (;;) {
    const result = await client.GET('/v1/simulations/jobs/{job_id}', {
      params: { path: { job_id: job.job_id }, query: { reservation_id: job.reservation_id } },
      ...(options.signal ? { signal: options.signal } : {}),
    });
    const body = unwrap(result);
    if (body.object === 'simulation') return body as Simulation;
    const running = body as SimulationJob;
    options.onProgress?.(running);
    await sleep(Math.max(0.25, running.retry_after_seconds) * 1000, options.signal);
  }
}

/** Follows a projection job's result path until it delivers (200) the season projection. */
export async function waitForProjection(
  client: MatchsimClient,
  job: Pick<ProjectionJob, 'job_id' | 'reservation_id'>,
  options: { signal?: AbortSignal } = {},
): Promise<SeasonProjection> {
  for (;;) {
    const result = await client.GET('/v1/projections/jobs/{job_id}', {
      params: { path: { job_id: job.job_id }, query: { reservation_id: job.reservation_id } },
      ...(options.signal ? { signal: options.signal } : {}),
    });
    const body = unwrap(result);
    if (body.object === 'season_projection') return body as SeasonProjection;
    await sleep(Math.max(0.25, (body as ProjectionJob).retry_after_seconds) * 1000, options.signal);
  }
}

export type BatchResult = Schemas['SimulationBatchResult'];

/** Item states after which a line of the results stream no longer changes. */
const FINAL_ITEM_STATES = new Set(['delivered', 'failed', 'expired', 'cancelled', 'rejected']);

/** The lines of an NDJSON body as they arrive, without holding the whole body. */
export async function* ndjsonLines(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let pending = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      pending += decoder.decode(value, { stream: true });
      for (let newline = pending.indexOf('\n'); newline >= 0; newline = pending.indexOf('\n')) {
        const line = pending.slice(0, newline);
        pending = pending.slice(newline + 1);
        if (line !== '') yield line;
      }
    }
    pending += decoder.decode();
    if (pending.trim() !== '') yield pending;
  } finally {
    // A caller that stops early closes the connection instead of reading the rest.
    await reader.cancel().catch(() => {});
  }
}

export interface BatchResultsOptions extends WaitOptions {
  /** Pause between reads while items are still queued or running; default 2 s. */
  intervalMs?: number;
  /** Only these sections of each delivered document (docs/api.md §2.3); default all. */
  include?: readonly Section[];
}

/**
 * Yields each item of a batch once it has ended, read line by line from the batch's NDJSON results
 * stream as the lines arrive (one request per read, whatever the number of items; the body is never
 * held whole): delivered items with their simulation (the stream settles each one, charging draws / 1000
 * credits once), the others with their error. Reads again, `intervalMs` apart, while items are still
 * queued or running.
 */
export async function* batchResults(
  client: MatchsimClient,
  batchId: string,
  options: BatchResultsOptions = {},
): AsyncGenerator<BatchResult> {
  const done = new Set<number>();
  const query = options.include ? { include: options.include.join(',') } : {};
  for (;;) {
    const body = unwrap(
      await client.GET('/v1/simulations/batch/{batch_id}/results', {
        params: { path: { batch_id: batchId }, query },
        parseAs: 'stream',
        ...(options.signal ? { signal: options.signal } : {}),
      }),
    ) as ReadableStream<Uint8Array>;
    let index = 0;
    for await (const line of ndjsonLines(body)) {
      const position = index++;
      if (done.has(position)) continue;
      const result = JSON.parse(line) as BatchResult;
      if (!FINAL_ITEM_STATES.has(result.status)) continue;
      done.add(position);
      yield result;
    }
    if (done.size === index) return;
    await sleep(options.intervalMs ?? 2000, options.signal);
  }
}

export type JobListQuery = Omit<
  NonNullable<operations['listSimulationJobs']['parameters']['query']>,
  'starting_after'
>;
export type BatchListQuery = Omit<
  NonNullable<operations['listSimulationBatches']['parameters']['query']>,
  'starting_after'
>;

/** The caller's jobs, newest first, every page fetched as the iteration reaches it (`limit` a page). */
export async function* jobs(
  client: MatchsimClient,
  query: JobListQuery = {},
  options: { signal?: AbortSignal } = {},
): AsyncGenerator<SimulationJob> {
  let after: string | undefined;
  for (;;) {
    const page = unwrap(
      await client.GET('/v1/simulations/jobs', {
        params: { query: { ...query, ...(after ? { starting_after: after } : {}) } },
        ...(options.signal ? { signal: options.signal } : {}),
      }),
    );
    yield* page.data;
    after = page.data.at(-1)?.job_id;
    if (!page.has_more || after === undefined) return;
  }
}

/** The caller's batches (without their items), newest first, page after page as the iteration goes. */
export async function* batches(
  client: MatchsimClient,
  query: BatchListQuery = {},
  options: { signal?: AbortSignal } = {},
): AsyncGenerator<BatchSummary> {
  let after: string | undefined;
  for (;;) {
    const page = unwrap(
      await client.GET('/v1/simulations/batches', {
        params: { query: { ...query, ...(after ? { starting_after: after } : {}) } },
        ...(options.signal ? { signal: options.signal } : {}),
      }),
    );
    yield* page.data;
    after = page.data.at(-1)?.batch_id;
    if (!page.has_more || after === undefined) return;
  }
}
