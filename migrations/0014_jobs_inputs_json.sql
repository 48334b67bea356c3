-- A job's engine inputs (~11 KB) as json, and what its views show (`request`, ~1 KB) in a column of its
-- own (issue "the host at GPU speed", docs/decisions.md §6). The engine's payload is written once by the
-- submission and read whole, as text, once by the worker's claim: PostgreSQL never looks inside it. As
-- jsonb, every submission converted it to jsonb's binary form: a 1,000-item batch's INSERT of its jobs
-- took 1.0–1.4 s of the server's time for that conversion, against 0.23 s as json (which only checks the
-- syntax). The request part is read on every delivery and result, so it stays jsonb, apart: reading it
-- out of a json column would parse the whole 11 KB each time.
ALTER TABLE jobs ADD COLUMN request jsonb;
UPDATE jobs SET request = inputs -> 'request' WHERE jsonb_typeof(inputs) = 'object' AND inputs ? 'request';
ALTER TABLE jobs ALTER COLUMN inputs TYPE json
  USING (CASE WHEN jsonb_typeof(inputs) = 'object' THEN inputs - 'request' ELSE inputs END)::json;
-- As 0011: lz4 where the server has it (the type change rewrote the column).
DO $$
BEGIN
  ALTER TABLE jobs ALTER COLUMN inputs SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported OR invalid_parameter_value THEN
  RAISE NOTICE 'lz4 compression is not available: keeping pglz';
END
$$;
