-- Simulations (docs/decisions.md §3, §6, §7): batches, jobs and their queue, the result cache, deliveries, the
-- idempotency store and the daily usage counters.
--
-- A job row is written in the same transaction as its credit hold (live keys), so a job exists exactly
-- when its reservation does. Workers claim queued jobs with FOR UPDATE SKIP LOCKED and hold a lease that
-- a heartbeat extends; a job whose lease ran out is queued again (or failed after too many attempts).
-- fixture_id carries no foreign key: fixtures are replaced by feed loads while jobs and results stay.

CREATE TABLE batches (
  id text PRIMARY KEY,                       -- batch_<base62>
  org_id text NOT NULL REFERENCES orgs (id),
  mode text NOT NULL CHECK (mode IN ('live', 'test')),
  draws integer NOT NULL CHECK (draws > 0),
  item_count integer NOT NULL CHECK (item_count BETWEEN 1 AND 1000),
  created_at timestamptz NOT NULL,
  request_id text NOT NULL,
  idempotency_key text
);
CREATE INDEX batches_org ON batches (org_id, created_at);

-- Finished simulation documents. A shared result (org_id NULL) is reusable by every organisation; a
-- private one (a custom lineup) only by its own. One result per cache key and owner: two jobs with the
-- same inputs that finish together keep the first document (the seed comes from the inputs, so the
-- documents are identical anyway).
CREATE TABLE results (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  cache_key text NOT NULL,
  scope text NOT NULL CHECK (scope IN ('shared', 'private')),
  org_id text REFERENCES orgs (id),
  fixture_id bigint NOT NULL,
  data_version text NOT NULL,
  draws integer NOT NULL CHECK (draws > 0),
  -- json, not jsonb: the document keeps its key order, so every delivery of it reads as built.
  document json NOT NULL,
  engine text NOT NULL,
  run_ms double precision NOT NULL DEFAULT 0,
  gpu_ms double precision NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL,
  CONSTRAINT results_owner_matches_scope CHECK ((scope = 'shared') = (org_id IS NULL))
);
CREATE UNIQUE INDEX results_shared_cache_key ON results (cache_key) WHERE scope = 'shared';
CREATE UNIQUE INDEX results_private_cache_key ON results (org_id, cache_key) WHERE scope = 'private';
CREATE INDEX results_fixture_version ON results (fixture_id, data_version, created_at) WHERE scope = 'shared';

CREATE TABLE jobs (
  id text PRIMARY KEY,                       -- job_<base62>
  org_id text NOT NULL REFERENCES orgs (id),
  mode text NOT NULL CHECK (mode IN ('live', 'test')),
  -- res_<base62>: the credit hold's id for live keys; generated (no hold) for test keys.
  reservation_id text NOT NULL UNIQUE,
  batch_id text REFERENCES batches (id),
  -- The item's place in its batch request (0-based), so the batch answers in the order it was sent.
  batch_position integer,
  fixture_id bigint NOT NULL,
  data_version text NOT NULL,
  draws integer NOT NULL CHECK (draws > 0),
  seed text NOT NULL,
  -- The engine's input, opaque to the queue.
  inputs jsonb NOT NULL,
  cache_key text NOT NULL,
  scope text NOT NULL CHECK (scope IN ('shared', 'private')),
  -- The price held for the job in milli-credits (0 for test keys).
  price_milli bigint NOT NULL DEFAULT 0 CHECK (price_milli >= 0),
  status text NOT NULL DEFAULT 'queued'
    CHECK (status IN ('queued', 'running', 'succeeded', 'delivered', 'failed', 'expired')),
  draws_done integer NOT NULL DEFAULT 0,
  attempts integer NOT NULL DEFAULT 0,
  lease_owner text,
  lease_expires_at timestamptz,
  created_at timestamptz NOT NULL,
  started_at timestamptz,
  finished_at timestamptz,
  result_id bigint REFERENCES results (id),
  error jsonb,
  -- GPU-seconds taken from the daily budget of usage_day at submission, replaced by the measured time.
  usage_day date NOT NULL,
  gpu_seconds_reserved double precision NOT NULL DEFAULT 0 CHECK (gpu_seconds_reserved >= 0),
  gpu_seconds_used double precision,
  engine text,
  request_id text NOT NULL,
  idempotency_key text,
  CONSTRAINT jobs_lease_only_while_running CHECK ((status = 'running') = (lease_owner IS NOT NULL)),
  CONSTRAINT jobs_result_when_done CHECK (status NOT IN ('succeeded', 'delivered') OR result_id IS NOT NULL)
);
CREATE INDEX jobs_queued ON jobs (created_at, id) WHERE status = 'queued';
CREATE INDEX jobs_running_lease ON jobs (lease_expires_at) WHERE status = 'running';
CREATE INDEX jobs_open_by_org ON jobs (org_id) WHERE status IN ('queued', 'running');
CREATE INDEX jobs_batch ON jobs (batch_id) WHERE batch_id IS NOT NULL;
CREATE INDEX jobs_succeeded_finished ON jobs (finished_at) WHERE status = 'succeeded';

-- Each delivery of a result (sim_<base62>): its own id, receipt and charge, and the exact body that was
-- sent, so that a replay answers the same bytes. At most one delivery per job.
CREATE TABLE deliveries (
  id text PRIMARY KEY,
  org_id text NOT NULL REFERENCES orgs (id),
  job_id text UNIQUE REFERENCES jobs (id),
  result_id bigint NOT NULL REFERENCES results (id),
  mode text NOT NULL CHECK (mode IN ('live', 'test')),
  credits_charged_milli bigint NOT NULL DEFAULT 0 CHECK (credits_charged_milli >= 0),
  response json NOT NULL,
  request_id text,
  idempotency_key text,
  created_at timestamptz NOT NULL
);
CREATE INDEX deliveries_result ON deliveries (result_id, created_at);
CREATE INDEX deliveries_org ON deliveries (org_id, created_at);

-- Idempotency-Key records (docs/decisions.md §7): scope org + key mode + method + path + key, kept 24 hours.
-- state: in_flight while the first request runs (locked_until bounds a crashed one), complete once its
-- response is stored, open when it ended without a storable response (a 429 or 5xx) after creating a job
-- or batch, so that a retry runs again and finds what the first attempt made.
CREATE TABLE idempotency_keys (
  org_id text NOT NULL REFERENCES orgs (id),
  mode text NOT NULL CHECK (mode IN ('live', 'test')),
  method text NOT NULL,
  path text NOT NULL,
  key text NOT NULL CHECK (length(key) BETWEEN 1 AND 255),
  body_hash text NOT NULL,
  state text NOT NULL CHECK (state IN ('in_flight', 'complete', 'open')),
  attempt text NOT NULL,
  locked_until timestamptz,
  job_id text,
  batch_id text,
  response_status integer,
  response_headers jsonb,
  response_body text,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (org_id, mode, method, path, key)
);
CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);

-- Daily ceilings per organisation and UTC day (docs/decisions.md §3, docs/api.md §8). The admission of a
-- submission locks its organisation's row for the day, so concurrent submissions are counted one at a time.
CREATE TABLE usage_days (
  org_id text NOT NULL REFERENCES orgs (id),
  day date NOT NULL,
  submissions integer NOT NULL DEFAULT 0 CHECK (submissions >= 0),
  batches integer NOT NULL DEFAULT 0 CHECK (batches >= 0),
  -- Reserved estimates of running work plus measured time of finished work, in milliseconds.
  gpu_ms bigint NOT NULL DEFAULT 0 CHECK (gpu_ms >= 0),
  PRIMARY KEY (org_id, day)
);
