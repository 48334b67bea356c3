-- Fixtures and their simulation inputs (docs/decisions.md §4 and §5), loaded from operators' feeds.
--
-- A fixture's inputs (ratings, squads with player profiles, predicted and announced lineups) are
-- replaced as one unit by the feed loader, in one transaction; readers read them in one snapshot.
-- `inputs_hash` fingerprints every stored input that changes a simulation; the service combines it
-- with the model version into the public `data_version`.

CREATE TABLE competitions (
  id integer PRIMARY KEY,
  name text NOT NULL,
  country text NOT NULL,
  season text NOT NULL,
  -- Not covered: listed, but squads, expected lineups and simulations answer fixture_not_covered.
  covered boolean NOT NULL,
  -- Log-scale goal model parameters of the competition (src/engine-contract/match-inputs.ts).
  intercept double precision NOT NULL,
  home_advantage double precision NOT NULL,
  updated_at timestamptz NOT NULL
);

CREATE TABLE teams (
  id integer PRIMARY KEY,
  name text NOT NULL,
  short_name text NOT NULL,
  country text NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX teams_name_lower ON teams (lower(name));
CREATE INDEX teams_short_name_lower ON teams (lower(short_name));

-- The registry of players as last seen in a feed; squads keep their own copy of name and position so
-- that a later feed cannot change the inputs behind an existing data_version.
CREATE TABLE players (
  id integer PRIMARY KEY,
  name text NOT NULL,
  position text CHECK (position IN ('goalkeeper', 'defender', 'midfielder', 'attacker')),
  team_id integer REFERENCES teams (id),
  updated_at timestamptz NOT NULL
);

CREATE TABLE fixtures (
  id integer PRIMARY KEY,
  competition_id integer NOT NULL REFERENCES competitions (id),
  home_team_id integer NOT NULL REFERENCES teams (id),
  away_team_id integer NOT NULL REFERENCES teams (id),
  kickoff timestamptz NOT NULL,
  state text NOT NULL CHECK (state IN (
    'provisional', 'inputs_final', 'lineups_announced', 'in_play', 'finished', 'postponed', 'cancelled')),
  home_score integer CHECK (home_score >= 0),
  away_score integer CHECK (away_score >= 0),
  -- NULL when the feed carried no inputs for the fixture (freshness `unavailable`).
  inputs_hash text,
  squad_version text,
  inputs_as_of timestamptz,
  lineups_announced_at timestamptz,
  -- The reload marker: set and committed before a feed replaces the inputs, cleared by the replacing
  -- transaction. Readers seeing it in the future answer 503 refreshing; a loader that died leaves a
  -- marker that simply runs out.
  refreshing_until timestamptz,
  updated_at timestamptz NOT NULL,
  CHECK (home_team_id <> away_team_id),
  CHECK ((inputs_hash IS NULL) = (squad_version IS NULL))
);
CREATE INDEX fixtures_kickoff ON fixtures (kickoff, id);
CREATE INDEX fixtures_home_team ON fixtures (home_team_id, kickoff);
CREATE INDEX fixtures_away_team ON fixtures (away_team_id, kickoff);

-- One row per side of a fixture with inputs: ratings and lineups.
CREATE TABLE fixture_sides (
  fixture_id integer NOT NULL REFERENCES fixtures (id) ON DELETE CASCADE,
  side text NOT NULL CHECK (side IN ('home', 'away')),
  attack double precision NOT NULL,
  defence double precision NOT NULL,
  -- The model's expected lineup: XI and bench in order.
  predicted_xi integer[] NOT NULL,
  predicted_bench integer[] NOT NULL,
  predicted_formation text,
  -- The official team sheet, NULL until announced.
  announced_xi integer[],
  announced_bench integer[],
  announced_formation text,
  PRIMARY KEY (fixture_id, side),
  CHECK ((announced_xi IS NULL) = (announced_bench IS NULL))
);

-- The eligible squad of each side with the players' profiles for this fixture.
CREATE TABLE squad_players (
  fixture_id integer NOT NULL REFERENCES fixtures (id) ON DELETE CASCADE,
  side text NOT NULL CHECK (side IN ('home', 'away')),
  player_id integer NOT NULL REFERENCES players (id),
  -- Order of the squad as the feed listed it.
  ordinal integer NOT NULL,
  name text NOT NULL,
  position text CHECK (position IN ('goalkeeper', 'defender', 'midfielder', 'attacker')),
  goal_share double precision NOT NULL CHECK (goal_share >= 0),
  assist_share double precision NOT NULL CHECK (assist_share >= 0),
  shot_share double precision NOT NULL CHECK (shot_share >= 0),
  card_share double precision NOT NULL CHECK (card_share >= 0),
  start_probability double precision NOT NULL CHECK (start_probability BETWEEN 0 AND 1),
  typical_minutes double precision NOT NULL CHECK (typical_minutes BETWEEN 1 AND 90),
  PRIMARY KEY (fixture_id, side, player_id)
);

-- The latest shared simulation of a fixture's data_version (docs/decisions.md §4 `summary`), written by the
-- simulations layer; the fixture list shows the row whose data_version is the fixture's current one.
CREATE TABLE fixture_summaries (
  fixture_id integer NOT NULL REFERENCES fixtures (id) ON DELETE CASCADE,
  data_version text NOT NULL,
  simulation_id text NOT NULL,
  created_at timestamptz NOT NULL,
  draws integer NOT NULL CHECK (draws > 0),
  home_win double precision NOT NULL,
  draw double precision NOT NULL,
  away_win double precision NOT NULL,
  expected_goals_home double precision NOT NULL,
  expected_goals_away double precision NOT NULL,
  PRIMARY KEY (fixture_id, data_version)
);

-- Expected lineups delivered to an organisation: the first live delivery of a data_version is charged
-- one credit, later reads of the same version replay the stored body for free.
CREATE TABLE expected_lineup_deliveries (
  org_id text NOT NULL REFERENCES orgs (id),
  fixture_id integer NOT NULL REFERENCES fixtures (id) ON DELETE CASCADE,
  data_version text NOT NULL,
  request_id text NOT NULL,
  credits_charged_milli bigint NOT NULL CHECK (credits_charged_milli >= 0),
  body jsonb NOT NULL,
  delivered_at timestamptz NOT NULL,
  PRIMARY KEY (org_id, fixture_id, data_version)
);
