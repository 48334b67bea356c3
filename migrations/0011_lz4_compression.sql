-- The large values the request path writes and reads (issue 10): a job's engine inputs (~11 KB) and a
-- result's document (~70 KB) are compressed with lz4 where the server has it, several times faster than
-- the default pglz both ways (a 1,000-item batch's INSERT of its jobs: 500 -> 340 ms). Values already
-- stored keep their compression. A server built without lz4 (or PGlite) keeps pglz: nothing else changes.
DO $$
BEGIN
  ALTER TABLE jobs ALTER COLUMN inputs SET COMPRESSION lz4;
  ALTER TABLE results ALTER COLUMN document SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported OR invalid_parameter_value THEN
  RAISE NOTICE 'lz4 compression is not available: keeping pglz';
END
$$;
