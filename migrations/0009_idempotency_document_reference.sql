-- One stored copy per document (issue 10, docs/decisions.md §7): an idempotent 200 that carries a
-- simulation document keeps its response without the document's text, and names the result the text
-- comes from and the offset in the stored body where it goes back on a replay. The document is then
-- stored once, in results; a replay rebuilds the same bytes from it.
ALTER TABLE idempotency_keys ADD COLUMN response_result_id bigint REFERENCES results (id);
ALTER TABLE idempotency_keys ADD COLUMN response_document_at integer
  CHECK (response_document_at >= 0);
ALTER TABLE idempotency_keys ADD CONSTRAINT idempotency_keys_document_reference
  CHECK ((response_result_id IS NULL) = (response_document_at IS NULL));
