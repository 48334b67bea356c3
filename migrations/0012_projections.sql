-- Season projections (docs/api.md §4.10, docs/model.md "Season projections"). Their own job table with
-- its own claim (src/projections/projection-store.ts owns both tables' SQL), beside the simulations' jobs.

-- The competition's table rules from the feed (docs/feed.md): {points: {win, draw}, tie_breakers, zones}.
-- NULL, or a field absent: the defaults (src/fixtures/competition-rules.ts).
ALTER TABLE competitions ADD COLUMN rules jsonb;

CREATE TABLE projection_jobs (
  id text PRIMARY KEY,                       -- pjob_<base62>
  org_id text NOT NULL REFERENCES orgs (id),
  mode text NOT NULL CHECK (mode IN ('live', 'test')),
  -- res_<base62>: the credit hold's id for live keys; generated (no hold) for test keys.
  reservation_id text NOT NULL UNIQUE,
  competition_id integer NOT NULL REFERENCES competitions (id),
  data_version text NOT NULL,
  seasons integer NOT NULL CHECK (seasons > 0),
  seed text NOT NULL,
  -- The sampler's input as read at submission (clubs, finished results, remaining fixtures' rates, rules).
  inputs jsonb NOT NULL,
  price_milli bigint NOT NULL DEFAULT 0 CHECK (price_milli >= 0),
  status text NOT NULL DEFAULT 'queued'
    CHECK (status IN ('queued', 'running', 'succeeded', 'delivered', 'failed', 'expired')),
  attempts integer NOT NULL DEFAULT 0,
  lease_owner text,
  lease_expires_at timestamptz,
  created_at timestamptz NOT NULL,
  started_at timestamptz,
  finished_at timestamptz,
  -- The season projection without its delivery's facts (id, credits_charged, receipt).
  result jsonb,
  error jsonb,
  request_id text NOT NULL,
  idempotency_key text,
  CONSTRAINT projection_jobs_lease_only_while_running CHECK ((status = 'running') = (lease_owner IS NOT NULL)),
  CONSTRAINT projection_jobs_result_when_done CHECK (status NOT IN ('succeeded', 'delivered') OR result IS NOT NULL)
);
CREATE INDEX projection_jobs_queued ON projection_jobs (created_at, id) WHERE status = 'queued';
CREATE INDEX projection_jobs_open_by_org ON projection_jobs (org_id) WHERE status IN ('queued', 'running');
CREATE INDEX projection_jobs_succeeded_finished ON projection_jobs (finished_at) WHERE status = 'succeeded';

-- A delivered projection (proj_…): one per job, written with the settlement; GET /v1/projections/{id}.
CREATE TABLE projections (
  id text PRIMARY KEY,
  job_id text NOT NULL UNIQUE REFERENCES projection_jobs (id),
  org_id text NOT NULL REFERENCES orgs (id),
  mode text NOT NULL CHECK (mode IN ('live', 'test')),
  credits_charged_milli bigint NOT NULL CHECK (credits_charged_milli >= 0),
  credits_remaining_milli bigint,
  request_id text NOT NULL,
  idempotency_key text,
  created_at timestamptz NOT NULL
);
CREATE INDEX projections_org ON projections (org_id, created_at);
