// The GPU a worker process uses on a host with several (docs/gpu.md, README "Running with Docker
// Compose"): each GPU worker service reserves one GPU of its own by id, so the container toolkit mounts that
// GPU alone; CPU workers reserve none and run ENGINE=cpu. docker-compose.yml is the setting; this reads it
// as Compose would (YAML merge keys, `${VAR:-default}` ids at their defaults).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

interface Service {
  profiles?: string[];
  environment?: Record<string, string>;
  deploy?: {
    resources?: {
      reservations?: { devices?: Array<{ driver: string; device_ids?: string[]; capabilities?: string[] }> };
    };
  };
}

const compose = parse(readFileSync(new URL('../../docker-compose.yml', import.meta.url), 'utf8'), {
  merge: true,
}) as { services: Record<string, Service> };

/** `${GPU_1:-1}` as Compose reads it with the variable unset. */
const withDefault = (value: string) => value.replace(/\$\{[A-Z0-9_]+:-([^}]*)\}/g, '$1');
const gpusOf = (service: Service) =>
  (service.deploy?.resources?.reservations?.devices ?? []).filter((device) => device.driver === 'nvidia');

describe('docker-compose.yml: one GPU per worker service', () => {
  const workers = Object.entries(compose.services).filter(([name]) => name.startsWith('worker'));

  it('gives each GPU worker service one GPU of its own, with the graphics capability Vulkan needs', () => {
    const gpuWorkers = workers.filter(([, service]) => gpusOf(service).length > 0);
    expect(gpuWorkers.map(([name]) => name).sort()).toEqual(['worker', 'worker-gpu1']);
    const ids = gpuWorkers.map(([, service]) => {
      const [device] = gpusOf(service);
      expect(device!.device_ids).toHaveLength(1);
      expect(device!.capabilities).toContain('graphics');
      return withDefault(device!.device_ids![0]!);
    });
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.sort()).toEqual(['0', '1']);
  });

  it('runs CPU workers on the CPU engine without a GPU reservation', () => {
    const cpu = compose.services['worker-cpu']!;
    expect(gpusOf(cpu)).toEqual([]);
    expect(cpu.environment?.ENGINE).toBe('cpu');
    expect(cpu.profiles).toEqual(['cpu']);
  });
});
