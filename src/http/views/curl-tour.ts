// The curl tour of docs/api.md §4.11, shown on /docs too: fixtures → quote → run → result path → batch →
// its NDJSON results → cancel → a market's odds as probabilities. One list of steps, run in one shell in
// order (later steps use the variables earlier ones set): test/http/docs.test.ts checks that docs/api.md
// carries the same commands and test/http/curl-tour.test.ts runs them with bash and curl against the demo
// service.
// Portable on purpose: curl, grep, cut, tr, head, tail and od only (no jq, no uuidgen), and
// `--fail-with-body` so a refused request fails its step and still shows the error object.

export interface TourStep {
  title: string;
  note: string;
  command: string;
}

/** A fresh Idempotency-Key: 16 random bytes as hex, from /dev/urandom (od is in every POSIX system). */
export const IDEMPOTENCY_KEY = `$(od -An -N16 -tx1 /dev/urandom | tr -d ' \\n')`;

export function curlTour(baseUrl: string): TourStep[] {
  const curl = `curl -s --fail-with-body -w '\\n' -H "Authorization: Bearer $MATCHSIM_KEY"`;
  const json = '-H "Content-Type: application/json"';
  const location = (file: string) => `grep -i '^location:' ${file} | tr -d '\\r' | cut -d' ' -f2`;
  return [
    {
      title: '1. Find two fixtures on sale',
      note: 'Free. `freshness.status` is `fresh` while a fixture can be simulated. The ids go into shell variables for the next steps.',
      command: [
        `FIXTURES=$(${curl} "${baseUrl}/v1/fixtures?status=fresh&limit=2" | grep -o '"fixture_id":[0-9]*' | cut -d: -f2)`,
        'FIXTURE_ID=$(echo "$FIXTURES" | head -n1); OTHER_ID=$(echo "$FIXTURES" | tail -n1); echo "$FIXTURE_ID $OTHER_ID"',
      ].join('\n'),
    },
    {
      title: '2. Quote the exact price',
      note: 'Free; reserves nothing. Price: draws / 1000 credits.',
      command: `${curl} ${json} -d "{\\"fixture_id\\": $FIXTURE_ID, \\"draws\\": 10000}" ${baseUrl}/v1/simulations/quote`,
    },
    {
      title: '3. Run it',
      note: '`wait_seconds` 0 answers at once: 202 with the job and its result path in `Location` (saved with the headers in run.headers). A run whose result exists already (the same inputs) answers 200 with the simulation instead. The Idempotency-Key is fresh random hex, so a retry of this very request never runs twice.',
      command: `${curl} ${json} -D run.headers -H "Idempotency-Key: ${IDEMPOTENCY_KEY}" -d "{\\"fixture_id\\": $FIXTURE_ID, \\"draws\\": 10000, \\"wait_seconds\\": 0}" ${baseUrl}/v1/simulations`,
    },
    {
      title: '4. Follow the result path from Location',
      note: '202 with progress while it runs (honour `Retry-After`, then ask again); 200 delivers the simulation and charges it, once. Nothing to follow when step 3 answered 200.',
      command: [
        `RESULT_PATH=$(${location('run.headers')}); echo "$RESULT_PATH"`,
        `[ -z "$RESULT_PATH" ] || ${curl} "${baseUrl}$RESULT_PATH"`,
      ].join('\n'),
    },
    {
      title: '5. Queue a batch',
      note: 'Up to 1,000 distinct fixtures; each delivered item costs draws / 1000 credits. 202 with the batch; `Location` is its path.',
      command: [
        `${curl} ${json} -D batch.headers -H "Idempotency-Key: ${IDEMPOTENCY_KEY}" -d "{\\"fixtures\\": [{\\"fixture_id\\": $FIXTURE_ID}, {\\"fixture_id\\": $OTHER_ID}], \\"draws\\": 2000}" ${baseUrl}/v1/simulations/batch`,
        `BATCH_PATH=$(${location('batch.headers')}); echo "$BATCH_PATH"`,
      ].join('\n'),
    },
    {
      title: "6. Read the batch's results",
      note: 'NDJSON, one line per item in request order: finished items are delivered (and charged, once), the others show their status. Read again at any time; what was delivered comes back free.',
      command: `${curl} "${baseUrl}$BATCH_PATH/results"`,
    },
    {
      title: '7. Cancel what has not begun',
      note: 'Items whose simulation has not begun (queued, or held by a worker that has not begun them) become `cancelled` and their holds are released; items begun and finished ones are kept. Cancelling again changes nothing.',
      command: `${curl} -X POST "${baseUrl}$BATCH_PATH/cancel"`,
    },
    {
      title: "8. Read a market's odds as probabilities",
      note: "Free. A bookmaker's 1X2 prices with the margin taken out by Shin's method (the default; `method` picks another): `probabilities` in the order of `odds`, with the overround and Shin's `z`.",
      command: `${curl} ${json} -d '{"odds": [2.10, 3.40, 3.60], "method": "shin"}' ${baseUrl}/v1/odds/implied`,
    },
  ];
}
