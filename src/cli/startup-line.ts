// The one plain line `serve` prints on stderr once it listens (stdout carries JSON log lines only): where
// the API, its docs and the playground are, and which engine runs the simulations, with the reason when a
// GPU was wanted and none was found (docs/gpu.md).

export interface StartupEngine {
  engine: 'gpu' | 'cpu';
  mode: 'auto' | 'gpu' | 'cpu';
  gpu: { adapter: string | null; reason: string | null } | null;
}

/** The service's address as a person types it: `localhost` for a wildcard or loopback listener. */
export function publicBaseUrl(baseUrlSetting: string | undefined, host: string, port: number): string {
  if (baseUrlSetting) return baseUrlSetting.replace(/\/$/, '');
  const local = host === '0.0.0.0' || host === '::' || host === '127.0.0.1' || host === '::1';
  return `http://${local ? 'localhost' : host}:${port}`;
}

export function engineSentence(engine: StartupEngine | null): string {
  if (!engine) return 'no engine in this process (role api: workers run the simulations)';
  if (engine.engine === 'gpu') return `engine: GPU, ${engine.gpu?.adapter ?? 'unnamed adapter'}`;
  if (engine.mode === 'cpu') return 'engine: CPU (ENGINE=cpu)';
  return `no GPU found: running on the CPU engine (${engine.gpu?.reason ?? 'no WebGPU adapter'})`;
}

export function startupLine(baseUrl: string, engine: StartupEngine | null): string {
  return (
    `matchsim is serving: API ${baseUrl}/v1, docs ${baseUrl}/docs, playground ${baseUrl}/playground; ` +
    engineSentence(engine)
  );
}
