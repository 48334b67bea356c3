// The compiled serializer of hot response schemas (src/http/serialize.ts) writes the bytes the zod
// serializer would, and still refuses a body that does not fit; a stored document spliced into its
// envelope (serializeWithJsonField) gives the bytes of the whole body through its schema.
import { describe, expect, it } from 'vitest';
import { documentWireText } from '../../src/engine/document-schema.js';
import { storedDocument } from '../../src/engine/stored-document.js';
import examples from '../../src/http/openapi/examples.json' with { type: 'json' };
import { creditBalanceSchema } from '../../src/http/routes/credits.js';
import { batchResultLineSchema, batchSchema, simulationSchema } from '../../src/http/schemas/simulations.js';
import {
  responseSerializerCompiler,
  serializeThrough,
  serializeWithJsonField,
  splicedText,
} from '../../src/http/serialize.js';
import { createTestContext } from '../helpers/app.js';

const compile = (schema: unknown) =>
  responseSerializerCompiler({ schema, method: 'GET', url: '/v1/credits', httpStatus: '200' } as never);

const balance = {
  object: 'credit_balance',
  livemode: true,
  total: 112.345,
  usage_tier: 1,
  plan: 'plus',
  held: 0.001,
  monthly: { remaining: 100, allowance: 100, resets_at: '2026-12-01T00:00:00.000Z' },
  topup: { remaining: 12.345 },
  limits: {
    data_rpm: 600,
    simulations_rpm: 5,
    concurrent_simulations: 4,
    batches_per_day: 20,
    submissions_per_day: 5000,
    gpu_seconds_per_day: 3600,
  },
  spend_cap: { credits: 25000, spent_this_month: 0 },
};

describe('compiled response serializer', () => {
  it('writes what the zod schema writes, fields in schema order, unknown fields left out', () => {
    const serialize = compile(creditBalanceSchema);
    const reordered = { ...balance, extra: 'not on the wire', object: 'credit_balance' };
    expect(serialize(reordered)).toBe(JSON.stringify(creditBalanceSchema.parse(balance)));
  });

  it('refuses a body without a required field, or with a number that is not finite', () => {
    const serialize = compile(creditBalanceSchema);
    const { held: _held, ...missing } = balance;
    expect(() => serialize(missing)).toThrow(/held/);
    expect(() => serialize({ ...balance, total: Number.NaN })).toThrow();
  });

  it('GET /v1/credits sends exactly the zod serialisation of what it sends', async () => {
    const t = await createTestContext();
    try {
      const { auth } = await t.newOrg({ plan: 'pro' });
      const response = await t.app.inject({ method: 'GET', url: '/v1/credits', headers: auth });
      expect(response.statusCode).toBe(200);
      expect(response.body).toBe(JSON.stringify(creditBalanceSchema.parse(response.json())));
    } finally {
      await t.close();
    }
  });
});

describe('the batch object, through its compiled serializer', () => {
  const item = {
    custom_id: 'quotes " and \\ and \u2028 and \ud800 and é',
    fixture: 101,
    job_id: 'job_1',
    status: 'running',
    credits_reserved: 0.1,
    reservation_id: 'rsv_1',
    result_url: '/v1/simulations/jobs/job_1/result',
    progress: { draws_done: 500, draws_total: 1000 },
    freshness: {
      status: 'fresh',
      reason: 'inputs as of today',
      evaluatedAt: 1_790_000_000_000,
      validUntil: null,
    },
  };
  const batch = {
    object: 'simulation_batch',
    batch_id: 'bat_1',
    status: 'a status added later',
    counts: {
      total: 4,
      rejected: 1,
      queued: 0,
      running: 1,
      succeeded: 0,
      failed: 1,
      delivered: 1,
      expired: 0,
      cancelled: 0,
    },
    livemode: true,
    price: { draws: 1000, credits: '1.000' },
    metadata: { team: 'a', 'odd key "x"': 'ü' },
    results_url: '/v1/simulations/batch/bat_1/results',
    created_at: '2026-11-27T00:00:00.000Z',
    completed_at: null,
    cancel_requested_at: null,
    items: [
      item,
      {
        ...item,
        custom_id: null,
        status: 'delivered',
        credits_charged: 0.1,
        progress: undefined,
        freshness: { ...item.freshness, validUntil: 1_790_000_100_000 },
      },
      {
        custom_id: 'r',
        fixture: null,
        status: 'rejected',
        credits_reserved: 0,
        error: {
          code: 'fixture_not_found',
          message: 'No fixture 9.',
          param: 'fixtures.2',
          recovery: null,
          doc_url: 'https://x/e',
        },
      },
      {
        custom_id: null,
        fixture: 7,
        job_id: 'job_3',
        status: 'failed',
        credits_reserved: 0.1,
        error: {
          code: 'simulation_failed',
          message: 'm',
          param: null,
          recovery: { job_id: 'job_3', nested: { a: [1, 'b', null] } },
        },
      },
    ],
    validUntil: null,
    credits_reserved_total: 0.3,
  };

  it('writes what the zod schema writes: optional fields absent or present, nulls, escapes, open enums', () => {
    expect(compile(batchSchema)(batch)).toBe(JSON.stringify(batchSchema.parse(batch)));
  });

  it('refuses a batch whose item lacks a required field', () => {
    const { credits_reserved: _reserved, ...broken } = item;
    expect(() => compile(batchSchema)({ ...batch, items: [broken] })).toThrow();
  });
});

describe('a stored document spliced into its envelope', () => {
  // A real delivery, captured from the demo service.
  const { simulation: document, ...envelope } = (examples as { Simulation: Record<string, unknown> })
    .Simulation;

  it('gives the bytes of the whole body through its schema, the document between its head and tail', () => {
    const json = documentWireText(document);
    const whole = serializeThrough(simulationSchema, { ...envelope, simulation: document });
    const stored = storedDocument(json);
    const spliced = serializeWithJsonField(simulationSchema, 'simulation', envelope, stored);
    expect(spliced.document).toBe(stored);
    expect(spliced.tail).toBe('}');
    expect(spliced.head + json + spliced.tail).toBe(whole);
    expect(splicedText(spliced)).toBe(whole);
    // Text (a choice of sections) splices in the same way.
    expect(splicedText(serializeWithJsonField(simulationSchema, 'simulation', envelope, json))).toBe(whole);
  });

  it('nests: a results-stream line with its delivery spliced in reads as the line through its schema', () => {
    const simulation = serializeWithJsonField(
      simulationSchema,
      'simulation',
      envelope,
      storedDocument(documentWireText(document)),
    );
    const line = {
      object: 'simulation_batch_result',
      custom_id: null,
      fixture: envelope.fixture_id,
      job_id: 'job_1',
      status: 'delivered',
    };
    const spliced = serializeWithJsonField(batchResultLineSchema, 'simulation', line, simulation);
    expect(spliced.document).toBe(simulation.document);
    expect(splicedText(spliced)).toBe(
      serializeThrough(batchResultLineSchema, { ...line, simulation: { ...envelope, simulation: document } }),
    );
  });
});
