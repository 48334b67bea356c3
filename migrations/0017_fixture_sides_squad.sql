-- A side's squad as its JSON text beside the side (issue "the host at GPU speed", docs/decisions.md §6):
-- a fixture read built each squad's JSON from its players' rows (json_agg), some 0.3–0.5 s of the
-- server's time for a 1,000-item batch's fixtures, against 0.05 s to read the text. squad_players stays
-- the squads' record; the feed loader writes this text from it in the same transaction
-- (src/fixtures/fixture-record.ts SQUAD_JSON), and a side without it is read as before.
ALTER TABLE fixture_sides ADD COLUMN squad text;
UPDATE fixture_sides s SET squad = COALESCE((
  SELECT json_agg(json_build_object('player_id', p.player_id, 'name', p.name,
           'position', p.position, 'goal_share', p.goal_share, 'assist_share', p.assist_share,
           'shot_share', p.shot_share, 'card_share', p.card_share,
           'start_probability', p.start_probability, 'typical_minutes', p.typical_minutes)
         ORDER BY p.ordinal)
  FROM squad_players p WHERE p.fixture_id = s.fixture_id AND p.side = s.side
), '[]'::json)::text;
