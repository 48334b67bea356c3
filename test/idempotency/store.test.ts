// The Idempotency-Key store (docs/decisions.md §7): replay byte for byte, conflict on another body, retryable
// conflict while in flight, nothing stored for a 429 or 5xx, 24-hour lifetime, and a retry after an
// unconfirmed outcome finds the job the first attempt created.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/errors.js';
import { parseIdempotencyKey, requestBodyHash } from '../../src/http/idempotent.js';
import {
  type IdempotencyStore,
  IN_FLIGHT_LEASE_MS,
  makeIdempotencyStore,
} from '../../src/idempotency/store.js';
import { insertOrg, manualClock } from '../billing/fixtures.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { makeSimParts, submitJob } from '../jobs/setup.js';

let db: TestDatabase;
let store: IdempotencyStore;
const clock = manualClock('2026-04-01T08:00:00Z');

beforeAll(async () => {
  db = await createTestDatabase();
  store = makeIdempotencyStore({ sql: db.sql, clock });
});

afterAll(async () => {
  await db.close();
});

const body = '{"fixture_id":1001,"draws":1000}';

async function scope(key = 'key-1') {
  const orgId = await insertOrg(db.sql);
  return {
    orgId,
    mode: 'live' as const,
    method: 'POST',
    path: '/v1/simulations',
    key,
    bodyHash: requestBodyHash(body),
  };
}

async function conflict(promise: Promise<unknown>): Promise<ApiError> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ApiError);
  expect((error as ApiError).code).toBe('idempotency_conflict');
  return error as ApiError;
}

describe('idempotency', () => {
  it('same key and body: the first response is replayed byte for byte', async () => {
    const request = await scope();
    const first = await store.begin(request);
    expect(first.kind).toBe('new');
    if (first.kind !== 'new') return;
    const response = {
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: '{"b":1,"a":[2, 3]}',
    };
    expect(await store.complete(first.record, response)).toBe(true);
    const again = await store.begin(request);
    expect(again).toEqual({ kind: 'replay', response });
  });

  it('same key, different body: 409 idempotency_conflict with retry.idempotency_key new', async () => {
    const request = await scope();
    const first = await store.begin(request);
    if (first.kind === 'new') await store.complete(first.record, { status: 202, headers: {}, body: '{}' });
    const error = await conflict(store.begin({ ...request, bodyHash: requestBodyHash('{"draws":2000}') }));
    expect(error.options.idempotencyKey).toBeUndefined(); // the table's default: new
    expect(error.options.retryable).toBeUndefined();
  });

  it('same key while in flight: retryable conflict, backoff, same key; a crashed attempt is taken over', async () => {
    const request = await scope();
    const first = await store.begin(request);
    const error = await conflict(store.begin(request));
    expect(error.options).toMatchObject({
      retryable: true,
      strategy: 'backoff_with_jitter',
      idempotencyKey: 'same',
    });
    expect(error.options.retryAfterSeconds).toBeGreaterThan(0);

    clock.advance(IN_FLIGHT_LEASE_MS + 1);
    const takeover = await store.begin(request);
    expect(takeover.kind).toBe('new');
    // The crashed attempt can no longer complete what the new one owns.
    if (first.kind === 'new')
      expect(await store.complete(first.record, { status: 200, headers: {}, body: 'late' })).toBe(false);
    if (takeover.kind === 'new')
      expect(await store.complete(takeover.record, { status: 200, headers: {}, body: 'ok' })).toBe(true);
    expect(await store.begin(request)).toMatchObject({ kind: 'replay', response: { body: 'ok' } });
  });

  it('a 429 or 5xx is never stored: the retry runs again', async () => {
    const request = await scope();
    for (const status of [429, 500, 503]) {
      const attempt = await store.begin(request);
      expect(attempt.kind).toBe('new');
      if (attempt.kind === 'new')
        expect(await store.complete(attempt.record, { status, headers: {}, body: '{}' })).toBe(false);
    }
    const [row] =
      await db.sql`SELECT count(*)::int AS n FROM idempotency_keys WHERE org_id = ${request.orgId}`;
    expect(row?.n).toBe(0);
  });

  it('a retry after an unconfirmed outcome finds the job the first attempt created', async () => {
    const request = await scope();
    const parts = makeSimParts(db, clock);
    const first = await store.begin(request);
    if (first.kind !== 'new') throw new Error('expected a new request');
    const job = await submitJob(parts, request.orgId);
    await db.sql.begin((tx) => store.attachJob(tx, first.record, { jobId: job.id }));
    // The settlement could not be confirmed: 503, not stored.
    await store.complete(first.record, { status: 503, headers: {}, body: '{"error":{}}' });
    const retry = await store.begin(request);
    expect(retry).toMatchObject({ kind: 'new', record: { jobId: job.id, batchId: null } });
    // Another body under the same key is still a conflict.
    await conflict(store.begin({ ...request, bodyHash: requestBodyHash('{}') }));
    await parts.queue.close();
  });

  it('scoped by organisation, key mode, method and path; kept 24 hours', async () => {
    const request = await scope('shared-key');
    const first = await store.begin(request);
    if (first.kind === 'new') await store.complete(first.record, { status: 200, headers: {}, body: 'one' });
    expect((await store.begin({ ...request, mode: 'test' })).kind).toBe('new');
    expect((await store.begin({ ...request, path: '/v1/simulations/batch' })).kind).toBe('new');
    expect((await store.begin({ ...request, orgId: await insertOrg(db.sql) })).kind).toBe('new');

    clock.advance(24 * 3_600_000 - 1);
    expect((await store.begin(request)).kind).toBe('replay');
    clock.advance(1);
    expect((await store.begin(request)).kind).toBe('new');
    expect(await store.purgeExpired(new Date(clock().getTime() + 24 * 3_600_000))).toBeGreaterThanOrEqual(4);
  });

  it('Idempotency-Key must be 1 to 255 characters', () => {
    expect(parseIdempotencyKey(undefined)).toBeNull();
    expect(parseIdempotencyKey('a'.repeat(255))).toHaveLength(255);
    for (const bad of ['', 'a'.repeat(256), ['a', 'b']]) {
      let caught: unknown;
      try {
        parseIdempotencyKey(bad);
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(ApiError);
      expect((caught as ApiError).options.param).toBe('Idempotency-Key');
    }
  });
});
