// Fixed-window counters of the limits (failed authentications, loop guard, lineup cooldown, and with
// Redis the per-minute request rates too). In-process by default; Redis when REDIS_URL is set so that
// several API processes count together. Without Redis when it was asked for (down, unreachable, slow),
// each process counts alone until it returns: limits hold per process, approximately, and requests keep
// being answered (docs/decisions.md §3, "Without Redis").
import type { Redis } from 'ioredis';

export interface WindowCount {
  count: number;
  /** Milliseconds until the window ends. */
  ttlMs: number;
}

export interface WindowCounter {
  /** Add one to `key` in a window of `windowMs` that starts with the first hit. */
  hit(key: string, windowMs: number): Promise<WindowCount>;
  /** Current count without adding. */
  peek(key: string): Promise<WindowCount>;
  /** Set a flag that lives `ttlMs` (a lock), or read it. */
  lock(key: string, ttlMs: number): Promise<void>;
  lockedFor(key: string): Promise<number>;
  /** Where the counts are kept now: this process alone, Redis, or this process while Redis is away. */
  store(): CounterStore;
  close(): Promise<void>;
}

export type CounterStore = 'in_process' | 'shared' | 'process_fallback';

export function makeMemoryWindowCounter(now: () => number = Date.now): WindowCounter {
  const windows = new Map<string, { count: number; endsAt: number }>();
  const sweep = setInterval(() => {
    const t = now();
    for (const [key, window] of windows) if (window.endsAt <= t) windows.delete(key);
  }, 60_000);
  sweep.unref();
  const read = (key: string): WindowCount => {
    const window = windows.get(key);
    const t = now();
    if (!window || window.endsAt <= t) return { count: 0, ttlMs: 0 };
    return { count: window.count, ttlMs: window.endsAt - t };
  };
  return {
    async hit(key, windowMs) {
      const t = now();
      let window = windows.get(key);
      if (!window || window.endsAt <= t) {
        window = { count: 0, endsAt: t + windowMs };
        windows.set(key, window);
      }
      window.count += 1;
      return { count: window.count, ttlMs: window.endsAt - t };
    },
    async peek(key) {
      return read(key);
    },
    async lock(key, ttlMs) {
      windows.set(`lock:${key}`, { count: 1, endsAt: now() + ttlMs });
    },
    async lockedFor(key) {
      return read(`lock:${key}`).ttlMs;
    },
    store: () => 'in_process',
    async close() {
      clearInterval(sweep);
    },
  };
}

const HIT_SCRIPT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
return {count, ttl}`;

export function makeRedisWindowCounter(redis: Redis, prefix = 'matchsim:window:'): WindowCounter {
  const read = async (key: string): Promise<WindowCount> => {
    const [count, ttl] = await Promise.all([redis.get(prefix + key), redis.pttl(prefix + key)]);
    return { count: Number(count ?? 0), ttlMs: Math.max(0, ttl) };
  };
  return {
    async hit(key, windowMs) {
      const [count, ttl] = (await redis.eval(HIT_SCRIPT, 1, prefix + key, String(windowMs))) as [
        number,
        number,
      ];
      return { count, ttlMs: Math.max(0, ttl) };
    },
    peek: read,
    async lock(key, ttlMs) {
      await redis.set(`${prefix}lock:${key}`, '1', 'PX', ttlMs);
    },
    async lockedFor(key) {
      return Math.max(0, await redis.pttl(`${prefix}lock:${key}`));
    },
    store: () => 'shared',
    async close() {},
  };
}

/**
 * Redis while it answers, this process's own counters while it does not. A command is sent only to a
 * ready connection (ioredis fails it at once otherwise: no offline queue) and bounded by the client's
 * command timeout; any failure answers from the fallback, so a limit check never turns into an error.
 * Locks (loop guard, cooldowns) set during an outage keep holding after it: a lock is read from both.
 */
export function makeResilientWindowCounter(
  redis: Redis,
  fallback: WindowCounter,
  onFailure: (error: unknown) => void = () => {},
): WindowCounter {
  const shared = makeRedisWindowCounter(redis);
  const usable = () => redis.status === 'ready';
  async function either<T>(sharedWork: () => Promise<T>, fallbackWork: () => Promise<T>): Promise<T> {
    if (!usable()) return fallbackWork();
    try {
      return await sharedWork();
    } catch (error) {
      onFailure(error);
      return fallbackWork();
    }
  }
  return {
    hit: (key, windowMs) =>
      either(
        () => shared.hit(key, windowMs),
        () => fallback.hit(key, windowMs),
      ),
    peek: (key) =>
      either(
        () => shared.peek(key),
        () => fallback.peek(key),
      ),
    lock: (key, ttlMs) =>
      either(
        () => shared.lock(key, ttlMs),
        () => fallback.lock(key, ttlMs),
      ),
    async lockedFor(key) {
      const local = await fallback.lockedFor(key);
      return Math.max(
        local,
        await either(
          () => shared.lockedFor(key),
          async () => 0,
        ),
      );
    },
    store: () => (usable() ? 'shared' : 'process_fallback'),
    close: () => fallback.close(),
  };
}
