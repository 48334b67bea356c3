// The store of the per-minute request limits (@fastify/rate-limit) when the limits are shared: the same
// window counters as the other limits (src/limits/window-counter.ts), so that without Redis the per-minute
// limits fall back to this process's counts like the rest instead of failing every request with 500
// (docs/decisions.md §3, "Without Redis"). In-process the plugin's own store serves.
import type { FastifyRateLimitStore, FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import type { WindowCounter } from '../limits/window-counter.js';

// The plugin takes a constructor, so the store is a class: the one class of this folder.
class CounterStore implements FastifyRateLimitStore {
  constructor(
    private readonly counters: WindowCounter,
    private readonly prefix: string,
  ) {}

  incr(
    key: string,
    callback: (error: Error | null, result?: { current: number; ttl: number }) => void,
    timeWindow: number,
  ) {
    this.counters.hit(`${this.prefix}${key}`, timeWindow).then(
      ({ count, ttlMs }) => callback(null, { current: count, ttl: ttlMs }),
      (error: Error) => callback(error),
    );
  }

  // A route with limits of its own counts apart, as the plugin's stores do.
  child(route: { method: string | string[]; url: string }): FastifyRateLimitStore {
    return new CounterStore(this.counters, `${this.prefix}${String(route.method)}${route.url}-`);
  }
}

/** A store constructor for the plugin's `store` option over `counters`. */
export function perMinuteStore(counters: WindowCounter): FastifyRateLimitStoreCtor {
  return class extends CounterStore {
    constructor() {
      super(counters, 'rpm:');
    }
  };
}
