-- A job's engine payload as text, not json (issue "the host at GPU speed", docs/decisions.md §6), as
-- results' documents became in 0015: the service writes it and its job thread reads it, PostgreSQL never
-- looks inside it. As json each payload was parsed by the server at submission (a batch of 1,000 travelled
-- inside one JSON document, payloads included); now each travels as a text parameter of its own and is
-- stored as it is. Text keeps the bytes exactly as json did.
ALTER TABLE jobs ALTER COLUMN inputs TYPE text;
-- As 0011: lz4 where the server has it (the type change rewrote the column).
DO $$
BEGIN
  ALTER TABLE jobs ALTER COLUMN inputs SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported OR invalid_parameter_value THEN
  RAISE NOTICE 'lz4 compression is not available: keeping pglz';
END
$$;
