-- When the engine began a batch item's draws (issue 54, docs/decisions.md §6 "Cancel"): set by the
-- worker, in one statement for the items it is about to begin, only while it still holds them (a lone
-- job, which nothing cancels, is not marked). A batch's cancel takes the items a worker holds but has not
-- begun (this column null) as well as the queued ones. The two statements lock the same rows, so an item
-- is either started or cancelled, never both. Null again when the job goes back to the queue (a lapsed
-- lease, a shutdown).
ALTER TABLE jobs ADD COLUMN run_started_at timestamptz;
