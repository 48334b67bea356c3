-- Signed webhooks (docs/api.md §6): endpoints an organisation registers, the events its jobs,
-- batches, projections and credits produce (an outbox: each row is written in the transaction that made
-- the change it reports), and one delivery row per event and endpoint, claimed by the workers under a
-- lease as jobs are (src/webhooks/delivery-store.ts).

-- At most 16 per organisation (src/webhooks/endpoints.ts). A test key's endpoints (mode 'test') receive
-- only test events, a live key's only live ones. The secret is kept as issued: signing needs it
-- (docs/api.md §6); it is shown once, in the answer that created or rotated it.
CREATE TABLE webhook_endpoints (
  id text PRIMARY KEY,
  org_id text NOT NULL REFERENCES orgs (id),
  mode text NOT NULL CHECK (mode IN ('live', 'test')),
  url text NOT NULL,
  description text,
  events text[] NOT NULL,
  enabled boolean NOT NULL DEFAULT true,
  secret text NOT NULL,
  -- The secret before the last rotation, still signing (a second v1=) until previous_secret_expires_at.
  previous_secret text,
  previous_secret_expires_at timestamptz,
  -- The first failed attempt since the last success; 3 days of failures disable the endpoint.
  failing_since timestamptz,
  disabled_reason text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX webhook_endpoints_org ON webhook_endpoints (org_id, mode, created_at DESC, id DESC);

-- body: the event as delivered and listed, its exact bytes (the signature covers them).
CREATE TABLE webhook_events (
  id text PRIMARY KEY,
  org_id text NOT NULL REFERENCES orgs (id),
  mode text NOT NULL CHECK (mode IN ('live', 'test')),
  type text NOT NULL,
  object_id text NOT NULL,
  body text NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX webhook_events_org_newest ON webhook_events (org_id, mode, created_at DESC, id DESC);
CREATE INDEX webhook_events_created ON webhook_events (created_at);
-- A job succeeds or fails once, a batch completes once: one event each, whatever path reports it.
CREATE UNIQUE INDEX webhook_events_once ON webhook_events (type, object_id) WHERE type <> 'credits.low';

-- One row per event and endpoint while it is being delivered; a resend adds one (or brings a pending one
-- forward: at most one pending row per event and endpoint, so one delivery of an event is in flight).
CREATE TABLE webhook_deliveries (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  event_id text NOT NULL REFERENCES webhook_events (id) ON DELETE CASCADE,
  endpoint_id text NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL,
  lease_owner text,
  lease_expires_at timestamptz,
  last_attempt_at timestamptz,
  last_status integer,
  last_error text,
  created_at timestamptz NOT NULL,
  delivered_at timestamptz
);
CREATE UNIQUE INDEX webhook_deliveries_one_pending ON webhook_deliveries (event_id, endpoint_id)
  WHERE status = 'pending';
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id);

-- credits.low: the balance (monthly + top-up remaining) below which a charge sends the event; null: never.
CREATE TABLE webhook_settings (
  org_id text PRIMARY KEY REFERENCES orgs (id),
  credits_low_threshold_milli bigint CHECK (credits_low_threshold_milli >= 0),
  updated_at timestamptz NOT NULL
);

-- Batches whose completion is still to be decided (src/webhooks/batch-completions.ts): written in the
-- transaction that ended some of a batch's jobs while another transaction ending jobs of the same batch
-- was under way, and decided by a worker once they have committed. Rows only ever appended and deleted.
CREATE TABLE webhook_batch_checks (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  batch_id text NOT NULL,
  created_at timestamptz NOT NULL
);
