-- Whether a batch has open jobs left (src/webhooks/batch-completions.ts completedAmong, in every store of
-- a worker's pack that ends batch items): read from the open items of that batch alone. Without it the
-- planner ANDed the batch's index (every item, open or not) with jobs_open_by_org, whose entries for
-- every job that has been queued or running since the last vacuum it read whole: 1.9 ms a store, against
-- 0.08, on a database of 15,000 jobs (docs/decisions.md §6, "What a small job costs besides its draws", a
-- third look).
CREATE INDEX jobs_open_in_batch ON jobs (batch_id) WHERE status IN ('queued', 'running') AND batch_id IS NOT NULL;
