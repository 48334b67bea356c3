-- Credits (docs/decisions.md §2). All amounts are integer milli-credits (1 credit = 1,000 milli = 1,000 draws).
--
-- credit_accounts holds each organisation's current balances; credit_ledger is the append-only record
-- of every movement, and for every account column the sum of the matching ledger deltas equals it.
-- Holds take their credits from a bucket when they are made (monthly first, then top-up) so that a
-- monthly reset forfeits only the monthly credits no job is waiting on.

CREATE TABLE credit_accounts (
  org_id text PRIMARY KEY REFERENCES orgs (id),
  -- 00:00 UTC on the 1st of the month whose allowance monthly_remaining holds.
  period_start timestamptz NOT NULL,
  -- Balance = monthly_remaining + topup_remaining; available = balance - monthly_held - topup_held.
  monthly_remaining bigint NOT NULL DEFAULT 0,
  topup_remaining bigint NOT NULL DEFAULT 0,
  monthly_held bigint NOT NULL DEFAULT 0,
  topup_held bigint NOT NULL DEFAULT 0,
  -- Charges since period_start; with the held amounts it is the spend the spend cap limits.
  spent_this_month bigint NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  CONSTRAINT credit_accounts_monthly_covers_holds CHECK (monthly_held >= 0 AND monthly_held <= monthly_remaining),
  CONSTRAINT credit_accounts_topup_covers_holds CHECK (topup_held >= 0 AND topup_held <= topup_remaining),
  CONSTRAINT credit_accounts_spent_not_negative CHECK (spent_this_month >= 0)
);

-- Reservations (`res_…`): the price of a job held until delivery settles it or it is released.
CREATE TABLE credit_holds (
  id text PRIMARY KEY,
  org_id text NOT NULL REFERENCES orgs (id),
  amount bigint NOT NULL CHECK (amount > 0),
  monthly_part bigint NOT NULL CHECK (monthly_part >= 0),
  topup_part bigint NOT NULL CHECK (topup_part >= 0),
  -- The billing period whose monthly credits back monthly_part: released after a reset, they expire.
  period_start timestamptz NOT NULL,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'settled', 'released')),
  created_at timestamptz NOT NULL,
  -- NULL while the job runs; the job layer sets job end + HOLD_TTL_SECONDS.
  expires_at timestamptz,
  settled_at timestamptz,
  released_at timestamptz,
  release_reason text,
  request_id text NOT NULL,
  idempotency_key text,
  CONSTRAINT credit_holds_parts CHECK (monthly_part + topup_part = amount),
  CONSTRAINT credit_holds_final_state CHECK (
    (status = 'pending' AND settled_at IS NULL AND released_at IS NULL)
    OR (status = 'settled' AND settled_at IS NOT NULL AND released_at IS NULL)
    OR (status = 'released' AND released_at IS NOT NULL AND settled_at IS NULL)
  )
);
CREATE INDEX credit_holds_pending_expiry ON credit_holds (expires_at) WHERE status = 'pending';
CREATE INDEX credit_holds_org ON credit_holds (org_id, created_at);

CREATE TABLE credit_ledger (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  org_id text NOT NULL REFERENCES orgs (id),
  kind text NOT NULL CHECK (kind IN ('grant', 'topup', 'hold', 'release', 'charge', 'expire')),
  -- The size of the movement; the deltas say which account columns it moved.
  amount bigint NOT NULL CHECK (amount > 0),
  monthly_delta bigint NOT NULL DEFAULT 0,
  topup_delta bigint NOT NULL DEFAULT 0,
  monthly_held_delta bigint NOT NULL DEFAULT 0,
  topup_held_delta bigint NOT NULL DEFAULT 0,
  -- The account's billing period when the row was written (charges in it count against the spend cap).
  period_start timestamptz NOT NULL,
  hold_id text REFERENCES credit_holds (id),
  request_id text,
  idempotency_key text,
  reference text,
  reason text,
  created_at timestamptz NOT NULL,
  CONSTRAINT credit_ledger_kind_shape CHECK (CASE kind
    WHEN 'grant' THEN monthly_delta = amount AND topup_delta = 0
      AND monthly_held_delta = 0 AND topup_held_delta = 0 AND hold_id IS NULL
    WHEN 'topup' THEN topup_delta = amount AND monthly_delta = 0
      AND monthly_held_delta = 0 AND topup_held_delta = 0 AND hold_id IS NULL
    WHEN 'expire' THEN monthly_delta = -amount AND topup_delta = 0
      AND monthly_held_delta = 0 AND topup_held_delta = 0
    WHEN 'hold' THEN monthly_held_delta >= 0 AND topup_held_delta >= 0
      AND monthly_held_delta + topup_held_delta = amount
      AND monthly_delta = 0 AND topup_delta = 0 AND hold_id IS NOT NULL
    WHEN 'release' THEN monthly_held_delta <= 0 AND topup_held_delta <= 0
      AND monthly_held_delta + topup_held_delta = -amount
      AND monthly_delta = 0 AND topup_delta = 0 AND hold_id IS NOT NULL
    WHEN 'charge' THEN monthly_delta <= 0 AND topup_delta <= 0 AND monthly_delta + topup_delta = -amount
      AND ((hold_id IS NULL AND monthly_held_delta = 0 AND topup_held_delta = 0)
        OR (hold_id IS NOT NULL AND monthly_held_delta = monthly_delta AND topup_held_delta = topup_delta))
  END)
);
CREATE INDEX credit_ledger_org ON credit_ledger (org_id, id);
-- A hold is made, released and charged at most once each.
CREATE UNIQUE INDEX credit_ledger_once_per_hold ON credit_ledger (hold_id, kind)
  WHERE hold_id IS NOT NULL AND kind IN ('hold', 'release', 'charge');
-- A retried top-up or one-step charge with the same idempotency key moves money once.
CREATE UNIQUE INDEX credit_ledger_topup_key ON credit_ledger (org_id, idempotency_key)
  WHERE kind = 'topup' AND idempotency_key IS NOT NULL;
CREATE UNIQUE INDEX credit_ledger_direct_charge_key ON credit_ledger (org_id, idempotency_key)
  WHERE kind = 'charge' AND hold_id IS NULL AND idempotency_key IS NOT NULL;

-- Append-only: corrections are new rows, never edits.
CREATE FUNCTION credit_ledger_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'credit_ledger is append-only: % refused', TG_OP
    USING ERRCODE = 'insufficient_privilege';
END
$$;
CREATE TRIGGER credit_ledger_no_update_or_delete BEFORE UPDATE OR DELETE ON credit_ledger
  FOR EACH ROW EXECUTE FUNCTION credit_ledger_refuse_change();
CREATE TRIGGER credit_ledger_no_truncate BEFORE TRUNCATE ON credit_ledger
  FOR EACH STATEMENT EXECUTE FUNCTION credit_ledger_refuse_change();
