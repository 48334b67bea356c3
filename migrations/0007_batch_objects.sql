-- Batches and jobs as batch-API users expect them (docs/api.md §2.6, §4.5, §4.10; docs/decisions.md §6):
-- metadata and custom ids echoed in every view, every item of a batch kept in submission order (the
-- rejected ones with their error), cancellation, and lists newest first.
--
-- A batch's status and counts are not stored: they follow from its jobs (and cancel_requested_at), so no
-- worker or delivery statement has to keep a second copy of them in step.

-- Up to 16 string pairs, as given with the batch.
ALTER TABLE batches ADD COLUMN metadata jsonb NOT NULL DEFAULT '{}';
-- The items that could not run, each {position, fixture, custom_id, error}: they have no job row.
ALTER TABLE batches ADD COLUMN rejected_items jsonb NOT NULL DEFAULT '[]';
-- When the first POST .../cancel arrived; its queued items became `cancelled` in that transaction.
ALTER TABLE batches ADD COLUMN cancel_requested_at timestamptz;

-- The client's name for a batch item (unique within its batch) and the metadata the job was submitted
-- with (a single simulation's own, or its batch's).
ALTER TABLE jobs ADD COLUMN custom_id text;
ALTER TABLE jobs ADD COLUMN metadata jsonb;

-- cancelled: a queued batch item whose batch was cancelled; its hold was released at once.
ALTER TABLE jobs DROP CONSTRAINT jobs_status_check;
ALTER TABLE jobs ADD CONSTRAINT jobs_status_check
  CHECK (status IN ('queued', 'running', 'succeeded', 'delivered', 'failed', 'expired', 'cancelled'));

CREATE UNIQUE INDEX jobs_batch_custom_id ON jobs (batch_id, custom_id) WHERE custom_id IS NOT NULL;
CREATE INDEX jobs_org_newest ON jobs (org_id, mode, created_at DESC, id DESC);
CREATE INDEX batches_org_newest ON batches (org_id, mode, created_at DESC, id DESC);
