// The batch and job routes that read, collect and cancel what was submitted (docs/api.md §2.6, §4.10):
// the results stream of a batch, its cancellation, a delivered simulation by its id, and the lists of
// jobs and batches. Every one answers only the organisation and key mode that made the resource; any
// other caller gets 404 resource_missing, as for an unknown id.
import { Readable } from 'node:stream';
import { JOB_STATUSES, type JobStatus } from '../../jobs/types.js';
import type { BatchResultItem } from '../../simulations/batch-results.js';
import type { App, AppDeps } from '../app-types.js';
import { admitsGzip, bodyEncoding, gzipLines, sendDocumentBody } from '../document-gzip.js';
import { answeredNotModified, type BodyEncoding, entityTag } from '../entity-tags.js';
import { conditionalReadHeadersSchema, notModifiedResponse } from '../schemas/common.js';
import {
  batchListQuerySchema,
  batchListSchema,
  batchParamsSchema,
  batchResultLineSchema,
  batchSchema,
  includeQuerySchema,
  jobListQuerySchema,
  jobListSchema,
  listPageOf,
  simulationParamsSchema,
  simulationReadSchema,
} from '../schemas/simulations.js';
import { type SplicedJson, splicedText } from '../serialize.js';
import { includedSections } from '../views/document-sections.js';
import {
  batchListView,
  batchResultLine,
  batchStatusView,
  jobListView,
  RESULT_LINES_VERSION,
  simulationWire,
} from '../views/simulations.js';
import { callContext, logAbout, sim, tags } from './job-routing.js';

export function registerSimulationReadRoutes(app: App, deps: AppDeps) {
  registerResultsStream(app, deps);
  registerCancel(app, deps);
  registerRetrieve(app, deps);
  registerJobList(app, deps);
  registerBatchList(app, deps);
}

/**
 * NDJSON: one line per item (a delivered item's with its stored document), a page's lines once the
 * page's deliveries are committed.
 */
async function* ndjsonLines(
  pages: AsyncIterable<BatchResultItem[]>,
  context: { requestId: string; docsUrl: string },
  include: ReadonlySet<string> | null,
): AsyncGenerator<string | SplicedJson> {
  for await (const page of pages) {
    for (const item of page) {
      const line = batchResultLine(item, context, include);
      yield typeof line === 'string' ? `${line}\n` : { ...line, tail: `${line.tail}\n` };
    }
  }
}

/**
 * The lines as text, each a chunk of its own. A page joined into one string (some 8.5 MB for 100 items)
 * was flattened and encoded into one fresh buffer of that size: the lines of a 1,000-item stream cost
 * 530–770 ms of CPU that way against 60–140 ms line by line (docs/decisions.md §6, "Compression").
 */
async function* lineTexts(lines: AsyncIterable<string | SplicedJson>): AsyncGenerator<string> {
  for await (const line of lines) yield typeof line === 'string' ? line : splicedText(line);
}

/**
 * The tag of a settled batch's results stream: what its lines follow from (the batch, its jobs' ends, the
 * sections asked for, the documentation address in error lines) and RESULT_LINES_VERSION, which stands
 * for how the lines are written.
 */
function resultsStreamTag(
  batchId: string,
  settled: Partial<Record<JobStatus, number>>,
  include: ReadonlySet<string> | null,
  docsUrl: string,
  encoding: BodyEncoding,
): string {
  const ends = JOB_STATUSES.map((status) => `${status}=${settled[status] ?? 0}`).join(',');
  const sections = include ? [...include].sort().join(',') : '*';
  return entityTag(
    ['batch-results', String(RESULT_LINES_VERSION), batchId, ends, sections, docsUrl],
    encoding,
  );
}

function registerResultsStream(app: App, deps: AppDeps) {
  app.get(
    '/v1/simulations/batch/:batch_id/results',
    {
      config: { ...sim, errors: ['resource_missing', 'settlement_unknown'] },
      schema: {
        tags,
        operationId: 'streamSimulationBatchResults',
        summary: 'Every item of a batch as NDJSON, delivering the finished ones',
        description:
          'One line per item in submission order. A finished item is delivered and settled exactly as at its result path (charged once; later reads are free; reservation_expired once its hold ended). Repeatable; counts as one request against simulations_rpm.',
        params: batchParamsSchema,
        querystring: includeQuerySchema,
        headers: conditionalReadHeadersSchema,
        response: {
          200: {
            description:
              'application/x-ndjson: one simulation_batch_result object per line. Once every item has ended (delivered, failed, expired, cancelled) the stream carries an ETag.',
            content: { 'application/x-ndjson': { schema: batchResultLineSchema } },
          },
          304: notModifiedResponse,
        },
      },
    },
    async (request, reply) => {
      logAbout(request, { batch_id: request.params.batch_id });
      const { batch, settled, pages } = await deps.services.simulations.batchResults(
        callContext(request, null),
        request.params.batch_id,
      );
      const include = includedSections(request.query.include);
      const gzip = admitsGzip(request);
      // A stream whose every item has ended says the same at each read: tagged, and 304 to a client that
      // holds it, before a page is read (entity-tags.ts).
      if (settled) {
        const tag = resultsStreamTag(
          batch.id,
          settled,
          include,
          deps.config.docsUrl,
          bodyEncoding(request, gzip),
        );
        if (answeredNotModified(request, reply, tag)) return reply;
      }
      const context = { requestId: request.id, docsUrl: deps.config.docsUrl };
      const lines = ndjsonLines(pages, context, include);
      reply.code(200).type('application/x-ndjson; charset=utf-8');
      // To a client that accepts gzip, the documents' stored forms spliced into one gzip member
      // (gzipLines), even where it would also take brotli, which would compress every document again;
      // otherwise as text, as any body (@fastify/compress: brotli, or none).
      if (gzip) {
        reply.header('content-encoding', 'gzip').header('vary', 'accept-encoding');
        return reply.send(Readable.from(gzipLines(lines)) as never);
      }
      // Each line went through its schema above; the type provider types send() for a JSON body only.
      return reply.send(Readable.from(lineTexts(lines)) as never);
    },
  );
}

function registerCancel(app: App, deps: AppDeps) {
  app.post(
    '/v1/simulations/batch/:batch_id/cancel',
    {
      config: { ...sim, errors: ['resource_missing'] },
      schema: {
        tags,
        operationId: 'cancelSimulationBatch',
        summary: 'Cancel a batch',
        description:
          'Items whose simulation has not begun (queued, or held by a worker that has not begun them) are cancelled and their holds released at once (nothing charged); items begun finish and can still be delivered. Idempotent: a repeated cancel answers the batch as it is.',
        params: batchParamsSchema,
        response: { 200: batchSchema },
      },
    },
    async (request) => {
      logAbout(request, { batch_id: request.params.batch_id });
      const status = await deps.services.simulations.cancelBatch(
        callContext(request, null),
        request.params.batch_id,
      );
      return batchStatusView(status, { requestId: request.id, docsUrl: deps.config.docsUrl });
    },
  );
}

function registerRetrieve(app: App, deps: AppDeps) {
  app.get(
    '/v1/simulations/:simulation_id',
    {
      config: { ...sim, errors: ['resource_missing'] },
      schema: {
        tags,
        operationId: 'getSimulation',
        summary: 'A delivered simulation again, by its id',
        description:
          'The same delivery as its first answer, with credits_charged 0. Tagged with an ETag: If-None-Match with it answers 304.',
        params: simulationParamsSchema,
        querystring: includeQuerySchema,
        headers: conditionalReadHeadersSchema,
        response: { 200: simulationReadSchema, 304: notModifiedResponse },
      },
    },
    async (request, reply) => {
      const delivered = await deps.services.simulations.retrieve(
        callContext(request, null),
        request.params.simulation_id,
      );
      const include = includedSections(request.query.include);
      return sendDocumentBody(request, reply, simulationWire(delivered, include));
    },
  );
}

function registerJobList(app: App, deps: AppDeps) {
  app.get(
    '/v1/simulations/jobs',
    {
      config: sim,
      schema: {
        tags,
        operationId: 'listSimulationJobs',
        summary: 'Your simulation jobs, newest first',
        querystring: jobListQuerySchema,
        response: { 200: jobListSchema },
      },
    },
    async (request) => {
      const page = await deps.services.simulations.listJobs(
        callContext(request, null),
        listPageOf(request.query),
      );
      return jobListView(page, (job) => deps.services.simulations.retryAfterSeconds(job));
    },
  );
}

function registerBatchList(app: App, deps: AppDeps) {
  app.get(
    '/v1/simulations/batches',
    {
      config: sim,
      schema: {
        tags,
        operationId: 'listSimulationBatches',
        summary: 'Your batches, newest first',
        querystring: batchListQuerySchema,
        response: { 200: batchListSchema },
      },
    },
    async (request) => {
      const page = await deps.services.simulations.listBatches(
        callContext(request, null),
        listPageOf(request.query),
      );
      return batchListView(page);
    },
  );
}
