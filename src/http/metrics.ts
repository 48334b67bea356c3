// Prometheus metrics (prom-client), one registry per process: the process and Node.js runtime metrics,
// HTTP requests by route and status with latency histograms, refusals for back-pressure and shutdown,
// jobs by outcome with run time and draws per second by engine, GPU restarts and CPU fallbacks, credits
// charged, and, read at scrape time, the queue depth by state and the credit holds open.
//
// Queue depth and holds are read from the database, so every process of one deployment reports the
// same values: aggregate them with max(), not sum().
import client from 'prom-client';

const LATENCY_BUCKETS_SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const RUN_BUCKETS_SECONDS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
// From a slow CPU run of a small job to a GPU dispatch of a million draws.
const DRAWS_PER_SECOND_BUCKETS = [1e4, 3e4, 1e5, 3e5, 1e6, 3e6, 1e7, 3e7, 1e8, 3e8, 1e9, 3e9, 1e10];

export type JobOutcomeLabel = 'completed' | 'cached' | 'failed' | 'dropped';
export type RefusalReason = 'event_loop_delay' | 'shutting_down';
export type ChargedItem = 'simulation' | 'expected_lineup' | 'projection';

/** What the scrape reads from the rest of the service; each is optional (a process without an engine). */
export interface MetricSources {
  /** Jobs by state (queued, running, succeeded awaiting delivery). */
  queueDepth?: () => Promise<Record<string, number>>;
  /** Pending credit holds: their number and milli-credits. */
  holdsOpen?: () => Promise<{ count: number; milli: number }>;
  /** The engine's state (src/engine/runner.ts health()). */
  engine?: () => { state: string; engine?: unknown; gpu?: unknown };
}

export interface Metrics {
  observeRequest(route: string, method: string, status: number, seconds: number): void;
  addCreditsCharged(milli: number, item: ChargedItem): void;
  /** A job a worker finished; `run` when the engine ran it (gpuSeconds: its GPU time, 0 on the CPU). */
  observeJob(
    outcome: JobOutcomeLabel,
    run?: { engine: string; runSeconds: number; gpuSeconds: number; draws: number },
  ): void;
  countRefusal(reason: RefusalReason): void;
  /** Sources read at each scrape; a later call adds to or replaces earlier ones. */
  watch(sources: MetricSources): void;
  render(): Promise<string>;
  readonly contentType: string;
}

interface GpuCounters {
  restarts?: number;
  cpuRetries?: number;
}

/** A counter that follows a running total kept elsewhere (the GPU engine's own counts). */
function followTotal(counter: client.Counter, read: () => number | undefined): () => void {
  let seen = 0;
  return () => {
    const total = read() ?? 0;
    if (total > seen) counter.inc(total - seen);
    seen = Math.max(seen, total);
  };
}

function requestMetrics(registers: client.Registry[]) {
  return {
    requests: new client.Counter({
      name: 'matchsim_http_requests_total',
      help: 'HTTP requests by route, method and status.',
      labelNames: ['route', 'method', 'status'] as const,
      registers,
    }),
    latency: new client.Histogram({
      name: 'matchsim_http_request_duration_seconds',
      help: 'HTTP request latency by route and method.',
      labelNames: ['route', 'method'] as const,
      buckets: LATENCY_BUCKETS_SECONDS,
      registers,
    }),
    refusals: new client.Counter({
      name: 'matchsim_http_refusals_total',
      help: 'Requests refused with 503 and retry advice: event-loop delay or shutdown.',
      labelNames: ['reason'] as const,
      registers,
    }),
    credits: new client.Counter({
      name: 'matchsim_credits_charged_total',
      help: 'Credits charged (settled deliveries and direct charges), by item.',
      labelNames: ['item'] as const,
      registers,
    }),
  };
}

function jobMetrics(registers: client.Registry[]) {
  return {
    finished: new client.Counter({
      name: 'matchsim_jobs_finished_total',
      help: 'Jobs a worker finished, by outcome (cached: answered from the result cache).',
      labelNames: ['outcome'] as const,
      registers,
    }),
    runSeconds: new client.Histogram({
      name: 'matchsim_job_run_seconds',
      help: 'Engine run time of a job, by engine.',
      labelNames: ['engine'] as const,
      buckets: RUN_BUCKETS_SECONDS,
      registers,
    }),
    drawsPerSecond: new client.Histogram({
      name: 'matchsim_job_draws_per_second',
      help: 'Draws per second of a job run, by engine.',
      labelNames: ['engine'] as const,
      buckets: DRAWS_PER_SECOND_BUCKETS,
      registers,
    }),
    draws: new client.Counter({
      name: 'matchsim_engine_draws_total',
      help: 'Draws simulated, by engine.',
      labelNames: ['engine'] as const,
      registers,
    }),
    // Over wall time, the GPU's busy fraction (docs/gpu.md "The service on a GPU host"): each job's
    // share by draws of its dispatch's pass, and the passes of one GPU do not overlap.
    gpuSeconds: new client.Counter({
      name: 'matchsim_gpu_seconds_total',
      help:
        "GPU time of the jobs the GPU ran, from the pass's timestamp queries (submit to readback where " +
        'the device has none: /healthz gpu.timing says which).',
      registers,
    }),
  };
}

/** Gauges and counters read at scrape time from the sources given to watch(). */
function scrapedMetrics(registers: client.Registry[], sources: MetricSources) {
  const engineGpu = () => (sources.engine?.().gpu ?? null) as GpuCounters | null;
  const restarts = new client.Counter({
    name: 'matchsim_gpu_restarts_total',
    help: 'GPU worker restarts after a lost device or a crash.',
    registers,
  });
  const fallbacks = new client.Counter({
    name: 'matchsim_gpu_cpu_fallbacks_total',
    help: 'Jobs the CPU engine ran because the GPU was lost, failing or unavailable.',
    registers,
  });
  const followRestarts = followTotal(restarts, () => engineGpu()?.restarts);
  const followFallbacks = followTotal(fallbacks, () => engineGpu()?.cpuRetries);
  new client.Gauge({
    name: 'matchsim_engine_ready',
    help: 'The engine of this process: 1 when it takes work, 0 while it starts.',
    labelNames: ['engine', 'state'] as const,
    registers,
    collect() {
      this.reset();
      followRestarts();
      followFallbacks();
      const health = sources.engine?.();
      if (!health) return;
      this.set({ engine: String(health.engine), state: health.state }, health.state === 'starting' ? 0 : 1);
    },
  });
  new client.Gauge({
    name: 'matchsim_queue_jobs',
    help: 'Jobs by state: queued, running, and succeeded awaiting delivery.',
    labelNames: ['state'] as const,
    registers,
    async collect() {
      if (!sources.queueDepth) return;
      // A scrape during a database outage keeps the last values instead of failing the whole scrape.
      const depth = await sources.queueDepth().catch(() => null);
      for (const [state, count] of Object.entries(depth ?? {})) this.set({ state }, count);
    },
  });
  // Each gauge reads for itself: prom-client collects the metrics of one scrape concurrently.
  const readHolds = async () => (sources.holdsOpen ? sources.holdsOpen().catch(() => null) : null);
  new client.Gauge({
    name: 'matchsim_credit_holds_open',
    help: 'Pending credit holds (reservations).',
    registers,
    async collect() {
      const holds = await readHolds();
      if (holds) this.set(holds.count);
    },
  });
  new client.Gauge({
    name: 'matchsim_credit_holds_open_credits',
    help: 'Credits held by pending holds (reservations).',
    registers,
    async collect() {
      const holds = await readHolds();
      if (holds) this.set(holds.milli / 1000);
    },
  });
}

// prom-client names three gauges with `_total`, which `promtool check metrics` refuses (a counter
// suffix); they go. `nodejs_active_resources{type}` and `nodejs_active_handles{type}` keep the counts.
const MISNAMED_DEFAULTS = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
];

function runtimeMetrics(registry: client.Registry): void {
  client.collectDefaultMetrics({ register: registry });
  for (const name of MISNAMED_DEFAULTS) registry.removeSingleMetric(name);
}

export function makeMetrics(): Metrics {
  const registry = new client.Registry();
  runtimeMetrics(registry);
  const registers = [registry];
  const http = requestMetrics(registers);
  const jobs = jobMetrics(registers);
  const sources: MetricSources = {};
  scrapedMetrics(registers, sources);
  return {
    observeRequest(route, method, status, seconds) {
      http.requests.inc({ route, method, status: String(status) });
      http.latency.observe({ route, method }, seconds);
    },
    addCreditsCharged(milli, item) {
      http.credits.inc({ item }, milli / 1000);
    },
    observeJob(outcome, run) {
      jobs.finished.inc({ outcome });
      if (!run) return;
      jobs.runSeconds.observe({ engine: run.engine }, run.runSeconds);
      jobs.draws.inc({ engine: run.engine }, run.draws);
      if (run.gpuSeconds > 0) jobs.gpuSeconds.inc(run.gpuSeconds);
      if (run.runSeconds > 0) jobs.drawsPerSecond.observe({ engine: run.engine }, run.draws / run.runSeconds);
    },
    countRefusal(reason) {
      http.refusals.inc({ reason });
    },
    watch(more) {
      Object.assign(sources, more);
    },
    render: () => registry.metrics(),
    contentType: registry.contentType,
  };
}
