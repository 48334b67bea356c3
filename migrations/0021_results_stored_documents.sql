-- A result's document in its stored form (issue 54, docs/decisions.md §6 "Stored documents"): the raw
-- deflate of its wire text's UTF-8 (ending on a sync flush, so a gzip body splices it in as it is), with
-- the CRC-32 and byte count of that UTF-8. The job thread that wrote the document deflates it, so the
-- event loop, the wire to the server and the server carry some 11 KB a document instead of some 85 KB
-- (whose lz4 the server computed on every insert). Rows stored before keep their text in `document` until
-- a read gives them the stored form (src/results/result-store.ts); a row holds one form or the other.
ALTER TABLE results
  ADD COLUMN document_deflated bytea,
  ADD COLUMN document_crc32 bigint,
  ADD COLUMN document_bytes integer,
  ALTER COLUMN document DROP NOT NULL;
-- Deflated already: the server's own compression would only try and fail.
ALTER TABLE results ALTER COLUMN document_deflated SET STORAGE EXTERNAL;
ALTER TABLE results ADD CONSTRAINT results_one_document_form CHECK (
  (document IS NULL) = (document_deflated IS NOT NULL)
  AND (document_deflated IS NULL) = (document_crc32 IS NULL)
  AND (document_deflated IS NULL) = (document_bytes IS NULL));
