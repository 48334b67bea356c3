-- The claim's fair order (docs/decisions.md §6 "Fair shares", src/jobs/kind-queue.ts claimFrom): the
-- organisations with queued jobs, and each one's first queued jobs, interactive before batch items and
-- oldest first and a batch's in its order, read from these indexes rather than from every queued row.
CREATE INDEX jobs_queued_by_owner ON jobs (org_id, mode, (batch_id IS NOT NULL), created_at, batch_position, id)
  WHERE status = 'queued';
CREATE INDEX projection_jobs_queued_by_owner ON projection_jobs (org_id, mode, created_at, id)
  WHERE status = 'queued';
