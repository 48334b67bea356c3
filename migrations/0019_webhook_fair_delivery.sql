-- Fair webhook delivery (issue 51, docs/api.md §6.3 "Fairness"; src/webhooks/delivery-store.ts
-- claimDeliveries): one organisation's slow or dead receivers never hold back another's deliveries.
-- The claim counts the deliveries in flight (leased) per endpoint and per organisation and mode, and
-- takes each endpoint's due deliveries through its own index, round-robin between organisations.

-- The endpoint's breaker: attempts in a row that got no answer (a timeout, a refused or reset
-- connection; an HTTP status, any, is an answer and closes it again), and until when it gets none.
ALTER TABLE webhook_endpoints ADD COLUMN unanswered integer NOT NULL DEFAULT 0;
ALTER TABLE webhook_endpoints ADD COLUMN paused_until timestamptz;

-- An endpoint's pending deliveries, oldest due first: what the claim reads per endpoint.
CREATE INDEX webhook_deliveries_endpoint_due ON webhook_deliveries (endpoint_id, next_attempt_at, id)
  WHERE status = 'pending';
-- Deliveries in flight (their lease is counted while it has not run out).
CREATE INDEX webhook_deliveries_leased ON webhook_deliveries (endpoint_id, lease_expires_at)
  WHERE status = 'pending' AND lease_owner IS NOT NULL;
