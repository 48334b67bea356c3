// The OpenAPI documents (src/http/openapi/documents.ts): what generators need (operation ids, named
// components, every error response with its codes, open enums, examples that validate), the admin API
// apart, and the stored copies in docs/openapi that `npm run lint:openapi` lints and the typed client is
// generated from: this test fails when they are stale (`npm run client:generate` renews them).
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERRORS } from '../../src/errors.js';
import { createTestContext, type TestContext } from '../helpers/app.js';

// biome-ignore lint/suspicious/noExplicitAny: OpenAPI documents are walked as JSON.
type Json = any;

let t: TestContext;
let customer: Json;
let admin: Json;

beforeAll(async () => {
  t = await createTestContext();
  customer = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
  admin = (await t.app.inject({ method: 'GET', url: '/admin/openapi.json' })).json();
});
afterAll(() => t.close());

const operations = (document: Json): Array<[string, string, Json]> =>
  Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods as Record<string, Json>).map(([method, operation]) => [path, method, operation]),
  ) as Array<[string, string, Json]>;

const stored = (file: string) =>
  JSON.parse(readFileSync(new URL(`../../docs/openapi/${file}`, import.meta.url), 'utf8'));

describe('the OpenAPI documents', () => {
  it('give every operation a unique operationId, a summary and a tag', () => {
    const ids = [...operations(customer), ...operations(admin)].map(
      ([, , operation]) => operation.operationId,
    );
    expect(ids.every((id) => typeof id === 'string' && /^[a-z][A-Za-z]+$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    for (const [, , operation] of operations(customer)) {
      expect(operation.summary).toBeTruthy();
      expect(operation.tags).toHaveLength(1);
    }
  });

  it('name the resources as components and reference them', () => {
    const names = Object.keys(customer.components.schemas);
    for (const name of [
      'CreditBalance',
      'Fixture',
      'FixtureList',
      'Squads',
      'ExpectedLineup',
      'Quote',
      'Simulation',
      'SimulationDocument',
      'SimulationJob',
      'Batch',
      'Error',
      'SimulationRequest',
    ]) {
      expect(names).toContain(name);
    }
    const run = customer.paths['/v1/simulations'].post;
    expect(run.requestBody.content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/SimulationRequest',
    });
    expect(run.responses['200'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/Simulation',
    });
  });

  it('document every error status a route answers, with the Error schema and an example per code', () => {
    for (const [path, method, operation] of operations(customer)) {
      const errors = Object.entries(operation.responses as Record<string, Json>).filter(
        ([s]) => Number(s) >= 400,
      );
      expect(
        errors.map(([s]) => s),
        `${method} ${path}`,
      ).toEqual(expect.arrayContaining(['400', '401', '500']));
      for (const [status, response] of errors) {
        const media = response.content['application/json'];
        expect(media.schema).toEqual({ $ref: '#/components/schemas/Error' });
        for (const code of Object.keys(media.examples)) {
          expect(ERRORS[code as keyof typeof ERRORS].status, `${path} ${code}`).toBe(Number(status));
          expect(response.description).toContain(`\`${code}\``);
        }
      }
    }
    const run = customer.paths['/v1/simulations'].post.responses;
    expect(Object.keys(run['402'].content['application/json'].examples)).toEqual([
      'balance_too_low',
      'max_credits_exceeded',
    ]);
    expect(run['429'].headers['Retry-After']).toEqual({ $ref: '#/components/headers/RetryAfter' });
    const batch = customer.paths['/v1/simulations/batch'].post;
    expect(batch.parameters.map((p: Json) => p.name)).toContain('idempotency-key');
  });

  it('document loop_guard on exactly the routes that submit or quote work (config.loopGuard)', () => {
    const guarded = operations(customer)
      .filter(
        ([, , operation]) =>
          'loop_guard' in (operation.responses['429']?.content['application/json'].examples ?? {}),
      )
      .map(([path, method]) => `${method} ${path}`)
      .sort();
    expect(guarded).toEqual([
      'post /v1/projections',
      'post /v1/projections/quote',
      'post /v1/simulations',
      'post /v1/simulations/batch',
      'post /v1/simulations/path',
      'post /v1/simulations/path/quote',
      'post /v1/simulations/quote',
    ]);
  });

  it('document enums that may grow as open and response objects as extensible', () => {
    const code = customer.components.schemas.Error.properties.error.properties.code;
    expect(code.anyOf).toEqual(expect.arrayContaining([{ type: 'string' }]));
    expect(code.anyOf[0].enum).toContain('balance_too_low');
    expect(customer.components.schemas.Fixture.properties.state.anyOf).toHaveLength(2);
    expect(JSON.stringify(customer.components.schemas.Simulation)).not.toContain(
      '"additionalProperties":false',
    );
    expect(customer.components.schemas.SimulationRequest.additionalProperties).toBe(false);
  });

  it('carry examples that validate against their schemas', () => {
    const ajv = new Ajv2020({ strict: false });
    (addFormats as unknown as (a: Ajv2020) => void)(ajv);
    ajv.addSchema(customer, 'openapi.json');
    const withExamples = Object.entries(customer.components.schemas as Record<string, Json>).filter(
      ([, schema]) => schema.examples,
    );
    expect(withExamples.map(([name]) => name)).toEqual(
      expect.arrayContaining([
        'CreditBalance',
        'FixtureList',
        'Simulation',
        'SimulationJob',
        'Batch',
        'Quote',
      ]),
    );
    for (const [name, schema] of withExamples) {
      const validate = ajv.compile({ $ref: `openapi.json#/components/schemas/${name}` });
      expect(validate(schema.examples[0]), `${name}: ${ajv.errorsText(validate.errors)}`).toBe(true);
    }
    const error = ajv.compile({ $ref: 'openapi.json#/components/schemas/Error' });
    for (const [code, example] of Object.entries(customer.components.examples as Record<string, Json>)) {
      expect(error(example.value), code).toBe(true);
      expect(example.value.error.doc_url).toBe(`http://api.test/docs#${code}`);
    }
  });

  it('keep the admin API in its own document under its own security scheme', () => {
    expect(Object.keys(customer.paths).some((path) => path.startsWith('/admin'))).toBe(false);
    expect(Object.keys(admin.paths).every((path) => path.startsWith('/admin/v1/'))).toBe(true);
    expect(admin.security).toEqual([{ AdminToken: [] }]);
    expect(admin.components.schemas.OrgDetail).toBeDefined();
    expect(customer.components.schemas.OrgDetail).toBeUndefined();
  });

  it('are stored up to date in docs/openapi (run `npm run client:generate` when this fails)', () => {
    for (const [live, file] of [
      [customer, 'openapi.json'],
      [admin, 'admin-openapi.json'],
    ] as const) {
      const copy = stored(file);
      const relocated = JSON.parse(JSON.stringify(live).replaceAll('http://api.test', copy.servers[0].url));
      expect(relocated, file).toEqual(copy);
    }
  });
});
