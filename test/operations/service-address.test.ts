// Where a service holding the embedded database listens (src/operations/service-address.ts): the address
// a CLI on the same host connects to, and a record removed only by the process that wrote it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  forgetServiceAddress,
  localUrl,
  readServiceAddress,
  writeServiceAddress,
} from '../../src/operations/service-address.js';

const dataDir = mkdtempSync(path.join(tmpdir(), 'matchsim-service-address-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe('the service address', () => {
  it('connects to loopback where the service listens on every address', () => {
    expect(localUrl('0.0.0.0', 8080)).toBe('http://127.0.0.1:8080');
    expect(localUrl('::', 8080)).toBe('http://[::1]:8080');
    expect(localUrl('127.0.0.1', 9000)).toBe('http://127.0.0.1:9000');
    expect(localUrl('::1', 9000)).toBe('http://[::1]:9000');
    expect(localUrl('api.internal', 80)).toBe('http://api.internal:80');
  });

  it('is forgotten only by the process that recorded it', () => {
    expect(readServiceAddress(dataDir)).toBeNull();
    writeServiceAddress(dataDir, { pid: 4242, url: 'http://127.0.0.1:8080' });
    forgetServiceAddress(dataDir, 1);
    expect(readServiceAddress(dataDir)).toEqual({ pid: 4242, url: 'http://127.0.0.1:8080' });
    forgetServiceAddress(dataDir, 4242);
    expect(readServiceAddress(dataDir)).toBeNull();
  });
});
