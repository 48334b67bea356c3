-- A result's document as text, not json (issue "the host at GPU speed", docs/decisions.md §6). The
-- service writes every document itself, serialised through its schema (migration 0010), and PostgreSQL
-- never looks inside it: as json, every stored document was parsed once more by the server only to check
-- its syntax (1,000 documents of 85 KB stored in packs of 16: 0.60 ms a document of the server's time as
-- json, 0.23 as text). Text keeps the bytes exactly as json did.
ALTER TABLE results ALTER COLUMN document TYPE text;
-- As 0011: lz4 where the server has it (the type change rewrote the column).
DO $$
BEGIN
  ALTER TABLE results ALTER COLUMN document SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported OR invalid_parameter_value THEN
  RAISE NOTICE 'lz4 compression is not available: keeping pglz';
END
$$;
