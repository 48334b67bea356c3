-- A delivery keeps the facts of its delivery, not a second copy of the document: the body it answered is
-- rebuilt from its job, its result and these columns, byte for byte (key order included, since results
-- keep their documents as json). The balance a live delivery left is the one fact not kept elsewhere.
ALTER TABLE deliveries ADD COLUMN credits_remaining_milli bigint;
UPDATE deliveries
SET credits_remaining_milli = round((response -> 'receipt' ->> 'credits_remaining')::numeric * 1000)::bigint
WHERE response -> 'receipt' ->> 'credits_remaining' IS NOT NULL;
ALTER TABLE deliveries DROP COLUMN response;
