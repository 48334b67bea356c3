-- A result's document as the bytes a delivery sends (issue 10, docs/decisions.md §6): rows written from
-- now on hold the document serialised through its schema (`wire_text`), so a delivery splices the stored
-- text into its response instead of parsing and serialising some 70 KB per request. Rows written before
-- keep their text as the engine wrote it (`wire_text` false) and are put through the schema when read.
-- The fixture summary's figures sit beside the document, so that a delivery's summary needs no parse.
ALTER TABLE results ADD COLUMN wire_text boolean NOT NULL DEFAULT false;
ALTER TABLE results ADD COLUMN home_win double precision;
ALTER TABLE results ADD COLUMN draw double precision;
ALTER TABLE results ADD COLUMN away_win double precision;
ALTER TABLE results ADD COLUMN expected_goals_home double precision;
ALTER TABLE results ADD COLUMN expected_goals_away double precision;
UPDATE results SET
  home_win = (document -> 'result' ->> 'home_win')::double precision,
  draw = (document -> 'result' ->> 'draw')::double precision,
  away_win = (document -> 'result' ->> 'away_win')::double precision,
  expected_goals_home = (document -> 'goals' -> 'expected' ->> 'home')::double precision,
  expected_goals_away = (document -> 'goals' -> 'expected' ->> 'away')::double precision;
ALTER TABLE results ALTER COLUMN home_win SET NOT NULL;
ALTER TABLE results ALTER COLUMN draw SET NOT NULL;
ALTER TABLE results ALTER COLUMN away_win SET NOT NULL;
ALTER TABLE results ALTER COLUMN expected_goals_home SET NOT NULL;
ALTER TABLE results ALTER COLUMN expected_goals_away SET NOT NULL;
