-- When the engine began a job's draws (issue 54, docs/decisions.md §6 "Cancel"): set by the worker, in
-- one statement for the jobs it is about to start, only while it still holds them; a batch's cancel takes
-- the jobs a worker holds but has not started (this column null) as well as the queued ones. The two
-- statements lock the same rows, so a job is either started or cancelled, never both. Null again when the
-- job goes back to the queue (a lapsed lease, a shutdown).
ALTER TABLE jobs ADD COLUMN run_started_at timestamptz;
