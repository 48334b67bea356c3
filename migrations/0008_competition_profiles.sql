-- A competition's own card and shot rates, its league profile (docs/feed.md, docs/model.md "League
-- profiles"): {yellow_per_match, straight_red_per_match, shots} as in MatchInputs.profile
-- (src/engine-contract/match-inputs.ts). NULL: the model's global constants.
ALTER TABLE competitions ADD COLUMN profile jsonb;
