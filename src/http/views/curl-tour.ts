// The curl tour of docs/api.md §4.11, shown on /docs too: fixtures → quote → run → job → batch. One list
// of steps; test/http/docs.test.ts checks that docs/api.md carries the same commands.

export interface TourStep {
  title: string;
  note: string;
  command: string;
}

export function curlTour(baseUrl: string): TourStep[] {
  const auth = '-H "Authorization: Bearer $MATCHSIM_KEY"';
  const json = '-H "Content-Type: application/json"';
  return [
    {
      title: '1. Find a fixture on sale',
      note: 'Free. `freshness.status` is `fresh` while a fixture can be simulated.',
      command: `curl -s ${auth} "${baseUrl}/v1/fixtures?status=fresh&limit=5"`,
    },
    {
      title: '2. Quote the exact price',
      note: 'Free; reserves nothing. Price: draws / 1000 credits.',
      command: `curl -s ${auth} ${json} -d '{"fixture_id": 1, "draws": 10000}' ${baseUrl}/v1/simulations/quote`,
    },
    {
      title: '3. Run it',
      note: '200 with the simulation when ready within wait_seconds, else 202 with a job. Send an Idempotency-Key so a retry never runs twice.',
      command: `curl -s ${auth} ${json} -H "Idempotency-Key: $(uuidgen)" -d '{"fixture_id": 1, "draws": 10000, "wait_seconds": 10}' ${baseUrl}/v1/simulations`,
    },
    {
      title: "4. Follow a job's result_url",
      note: '202 with progress while it runs (honour Retry-After); 200 delivers and settles it.',
      command: `curl -s ${auth} "${baseUrl}/v1/simulations/jobs/$JOB_ID?reservation_id=$RESERVATION_ID"`,
    },
    {
      title: '5. Queue a batch',
      note: 'Up to 1,000 fixtures; each delivered item costs draws / 1000 credits.',
      command: `curl -s ${auth} ${json} -H "Idempotency-Key: $(uuidgen)" -d '{"fixtures": [{"fixture_id": 1}, {"fixture_id": 2}], "draws": 2000}' ${baseUrl}/v1/simulations/batch`,
    },
  ];
}
