-- Same inputs, same table (docs/decisions.md §12): a projection job records its identity's key
-- (src/projections/projection-identity.ts), and a submission finds a stored table of the same key and key
-- mode there instead of running the seasons again. Jobs of earlier versions have none and are never found.
ALTER TABLE projection_jobs ADD COLUMN cache_key text;
CREATE INDEX projection_jobs_cached ON projection_jobs (cache_key, mode) WHERE result IS NOT NULL;
