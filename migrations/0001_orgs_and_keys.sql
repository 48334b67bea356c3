-- Organisations and their API keys (docs/decisions.md §1). Keys are stored as SHA-256 hashes only.
CREATE TABLE orgs (
  id text PRIMARY KEY,                       -- org_<base62>
  name text NOT NULL,
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'suspended')),
  plan text NOT NULL DEFAULT 'none' CHECK (plan IN ('none', 'plus', 'pro')),
  plan_active boolean NOT NULL DEFAULT true,
  -- Credits per UTC month in milli-credits; NULL = default (10x the plan's monthly allowance).
  spend_cap_milli bigint CHECK (spend_cap_milli IS NULL OR spend_cap_milli >= 0),
  -- Operator overrides of the plan's limits (docs/decisions.md §3), e.g. {"simulations_rpm": 100}.
  limit_overrides jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE api_keys (
  id text PRIMARY KEY,                       -- key_<base62>
  org_id text NOT NULL REFERENCES orgs (id),
  mode text NOT NULL CHECK (mode IN ('live', 'test')),
  secret_hash text NOT NULL UNIQUE,          -- hex SHA-256 of the whole secret
  secret_prefix text NOT NULL,               -- first characters, for operators to recognise a key
  scopes text[] NOT NULL,
  ip_allowlist text[] NOT NULL DEFAULT '{}',
  expires_at timestamptz,
  revoked_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX api_keys_org_id ON api_keys (org_id);

-- Settings the service generates once and keeps (the admin token of the embedded default).
CREATE TABLE service_settings (
  name text PRIMARY KEY,
  value text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
