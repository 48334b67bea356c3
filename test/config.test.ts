import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, serviceClock } from '../src/config.js';

describe('configuration (docs/decisions.md §10)', () => {
  it('has the documented defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      PORT: 8080,
      HOST: '0.0.0.0',
      DATA_DIR: './data',
      ENGINE: 'auto',
      HOLD_TTL_SECONDS: 3600,
      TRUST_PROXY: false,
    });
    expect(config).toMatchObject({
      HEADERS_TIMEOUT_SECONDS: 10,
      REQUEST_TIMEOUT_SECONDS: 60,
      HANDLER_TIMEOUT_SECONDS: 60,
      CONNECTION_TIMEOUT_SECONDS: 120,
    });
    expect(config.DATABASE_URL).toBeUndefined();
    expect(config.REDIS_URL).toBeUndefined();
    expect(config.baseUrl).toBe('http://localhost:8080');
    expect(config.docsUrl).toBe('http://localhost:8080/docs');
  });

  it('derives doc and result addresses from BASE_URL and DOCS_URL', () => {
    const config = loadConfig({
      BASE_URL: 'https://api.example.com/',
      DOCS_URL: 'https://docs.example.com/errors',
    });
    expect(config.baseUrl).toBe('https://api.example.com');
    expect(config.docsUrl).toBe('https://docs.example.com/errors');
  });

  it.each([
    ['PORT', 'eighty'],
    ['PORT', '70000'],
    ['ENGINE', 'tpu'],
    ['DATABASE_URL', 'mysql://x'],
    ['REDIS_URL', 'http://x'],
    ['HOLD_TTL_SECONDS', '0'],
    ['TRUST_PROXY', 'maybe'],
    ['ADMIN_TOKEN', 'short'],
    ['BASE_URL', 'not a url'],
    ['REQUEST_TIMEOUT_SECONDS', '0'],
    ['HANDLER_TIMEOUT_SECONDS', '10'],
    ['HEADERS_TIMEOUT_SECONDS', '61'],
    ['CONNECTION_TIMEOUT_SECONDS', '60'],
    ['MATCHSIM_DEMO', 'maybe'],
    ['METRICS_PORT', '-1'],
    ['SHUTDOWN_TIMEOUT_SECONDS', 'soon'],
  ])('stops at boot on an invalid %s, naming it', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(name);
  });

  it('turns the demo on by default and off in production; refuses a demo in production', () => {
    expect(loadConfig({}).demo).toBe(true);
    expect(loadConfig({ NODE_ENV: 'development' }).demo).toBe(true);
    expect(loadConfig({ NODE_ENV: 'production' })).toMatchObject({ production: true, demo: false });
    expect(loadConfig({ MATCHSIM_DEMO: 'off' }).demo).toBe(false);
    expect(() => loadConfig({ NODE_ENV: 'production', MATCHSIM_DEMO: 'on' })).toThrow(/MATCHSIM_DEMO/);
    expect(loadConfig({})).toMatchObject({
      SHUTDOWN_DELAY_SECONDS: 0,
      SHUTDOWN_TIMEOUT_SECONDS: 30,
      MAX_EVENT_LOOP_DELAY_MS: 1000,
    });
    expect(loadConfig({}).METRICS_PORT).toBeUndefined();
  });

  it("moves the service's clock by CLOCK_OFFSET_SECONDS, never in production", () => {
    expect(loadConfig({}).CLOCK_OFFSET_SECONDS).toBe(0);
    const ahead = serviceClock(loadConfig({ CLOCK_OFFSET_SECONDS: String(3 * 86_400) }))().getTime();
    expect(ahead - Date.now()).toBeGreaterThan(3 * 86_400_000 - 60_000);
    expect(ahead - Date.now()).toBeLessThanOrEqual(3 * 86_400_000);
    const behind = serviceClock(loadConfig({ CLOCK_OFFSET_SECONDS: '-3600' }))().getTime();
    expect(Date.now() - behind).toBeGreaterThanOrEqual(3_600_000);
    expect(() => loadConfig({ CLOCK_OFFSET_SECONDS: String(400 * 86_400) })).toThrow(/CLOCK_OFFSET_SECONDS/);
    expect(() => loadConfig({ CLOCK_OFFSET_SECONDS: '1.5' })).toThrow(/CLOCK_OFFSET_SECONDS/);
    expect(() => loadConfig({ NODE_ENV: 'production', CLOCK_OFFSET_SECONDS: '60' })).toThrow(
      /CLOCK_OFFSET_SECONDS/,
    );
    expect(loadConfig({ NODE_ENV: 'production', CLOCK_OFFSET_SECONDS: '0' }).production).toBe(true);
  });

  it('treats empty variables as unset', () => {
    expect(loadConfig({ PORT: '', DATABASE_URL: '' }).PORT).toBe(8080);
  });
});
