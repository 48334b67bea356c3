// Prometheus text-format metrics without a dependency: request counts by route and status, a latency
// histogram, credits charged, and gauges other modules register (the engine's state and restarts).

const LATENCY_BUCKETS_SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

type Labels = Record<string, string>;

function labelText(labels: Labels): string {
  const parts = Object.entries(labels).map(([name, value]) => `${name}="${value.replace(/["\\\n]/g, '_')}"`);
  return parts.length ? `{${parts.join(',')}}` : '';
}

export interface Metrics {
  observeRequest(route: string, method: string, status: number, seconds: number): void;
  addCreditsCharged(milli: number, livemode: boolean): void;
  /** A gauge read at scrape time. */
  registerGauge(name: string, help: string, read: () => Array<{ labels: Labels; value: number }>): void;
  increment(name: string, help: string, labels?: Labels, by?: number): void;
  render(): string;
}

interface MetricValues {
  requests: Map<string, number>;
  histograms: Map<string, { buckets: number[]; sum: number; count: number }>;
  counters: Map<string, { help: string; values: Map<string, number> }>;
  gauges: Map<string, { help: string; read: () => Array<{ labels: Labels; value: number }> }>;
}

export function makeMetrics(): Metrics {
  const values: MetricValues = {
    requests: new Map(),
    histograms: new Map(),
    counters: new Map(),
    gauges: new Map(),
  };
  const { requests, histograms, counters, gauges } = values;

  const increment: Metrics['increment'] = (name, help, labels = {}, by = 1) => {
    let counter = counters.get(name);
    if (!counter) {
      counter = { help, values: new Map() };
      counters.set(name, counter);
    }
    const key = labelText(labels);
    counter.values.set(key, (counter.values.get(key) ?? 0) + by);
  };

  return {
    observeRequest(route, method, status, seconds) {
      const key = labelText({ route, method, status: String(status) });
      requests.set(key, (requests.get(key) ?? 0) + 1);
      const histogramKey = labelText({ route, method });
      let histogram = histograms.get(histogramKey);
      if (!histogram) {
        histogram = { buckets: LATENCY_BUCKETS_SECONDS.map(() => 0), sum: 0, count: 0 };
        histograms.set(histogramKey, histogram);
      }
      for (let i = 0; i < LATENCY_BUCKETS_SECONDS.length; i++) {
        if (seconds <= LATENCY_BUCKETS_SECONDS[i]!) histogram.buckets[i]! += 1;
      }
      histogram.sum += seconds;
      histogram.count += 1;
    },
    addCreditsCharged(milli, livemode) {
      increment(
        'matchsim_credits_charged_total',
        'Credits charged (settled), by mode.',
        {
          mode: livemode ? 'live' : 'test',
        },
        milli / 1000,
      );
    },
    registerGauge(name, help, read) {
      gauges.set(name, { help, read });
    },
    increment,
    render: () => renderMetrics(values),
  };
}

function renderMetrics({ requests, histograms, counters, gauges }: MetricValues): string {
  const lines: string[] = [];
  lines.push('# HELP matchsim_http_requests_total HTTP requests by route, method and status.');
  lines.push('# TYPE matchsim_http_requests_total counter');
  for (const [labels, value] of requests) lines.push(`matchsim_http_requests_total${labels} ${value}`);
  lines.push('# HELP matchsim_http_request_duration_seconds HTTP request latency.');
  lines.push('# TYPE matchsim_http_request_duration_seconds histogram');
  for (const [labels, histogram] of histograms) {
    const inner = labels.slice(1, -1);
    LATENCY_BUCKETS_SECONDS.forEach((bound, i) => {
      lines.push(
        `matchsim_http_request_duration_seconds_bucket{${inner},le="${bound}"} ${histogram.buckets[i]}`,
      );
    });
    lines.push(`matchsim_http_request_duration_seconds_bucket{${inner},le="+Inf"} ${histogram.count}`);
    lines.push(`matchsim_http_request_duration_seconds_sum${labels} ${histogram.sum}`);
    lines.push(`matchsim_http_request_duration_seconds_count${labels} ${histogram.count}`);
  }
  if (!counters.has('matchsim_credits_charged_total')) {
    lines.push('# HELP matchsim_credits_charged_total Credits charged (settled), by mode.');
    lines.push('# TYPE matchsim_credits_charged_total counter');
    lines.push('matchsim_credits_charged_total{mode="live"} 0');
  }
  for (const [name, counter] of counters) {
    lines.push(`# HELP ${name} ${counter.help}`);
    lines.push(`# TYPE ${name} counter`);
    for (const [labels, value] of counter.values) lines.push(`${name}${labels} ${value}`);
  }
  for (const [name, gauge] of gauges) {
    lines.push(`# HELP ${name} ${gauge.help}`);
    lines.push(`# TYPE ${name} gauge`);
    for (const sample of gauge.read()) lines.push(`${name}${labelText(sample.labels)} ${sample.value}`);
  }
  return `${lines.join('\n')}\n`;
}
