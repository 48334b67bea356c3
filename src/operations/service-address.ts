// Where a service that holds the embedded database listens (docs/decisions.md §8, "Operators' CLI beside
// the service"). PGlite belongs to one process and its socket serves that process alone, so while
// `npm start` runs, a CLI command on the same DATA_DIR cannot open the database; it reaches the running
// service's admin API instead. The service writes DATA_DIR/service.json once it listens and removes it
// when it stops; the CLI reads it when the embedded database's lock names a live owner.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export interface ServiceAddress {
  pid: number;
  /** The admin API's base, on the loopback address when the service listens on every address. */
  url: string;
}

const fileIn = (dataDir: string) => path.resolve(dataDir, 'service.json');

/** A URL this host reaches the listener by: `0.0.0.0` and `::` are listened on, not connected to. */
export function localUrl(host: string, port: number): string {
  const reachable = host === '0.0.0.0' || host === '' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return `http://${reachable.includes(':') ? `[${reachable}]` : reachable}:${port}`;
}

export function writeServiceAddress(dataDir: string, address: ServiceAddress): void {
  writeFileSync(fileIn(dataDir), `${JSON.stringify(address)}\n`, { mode: 0o600 });
}

/** Removes the record of process `pid`: a later service on the same folder may have written its own. */
export function forgetServiceAddress(dataDir: string, pid: number): void {
  if (readServiceAddress(dataDir)?.pid === pid) rmSync(fileIn(dataDir), { force: true });
}

export function readServiceAddress(dataDir: string): ServiceAddress | null {
  try {
    const value = JSON.parse(readFileSync(fileIn(dataDir), 'utf8')) as Partial<ServiceAddress>;
    return typeof value.pid === 'number' && typeof value.url === 'string'
      ? { pid: value.pid, url: value.url }
      : null;
  } catch {
    return null;
  }
}
