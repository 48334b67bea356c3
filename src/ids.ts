// Public identifiers and secrets: a prefix and random base62 characters (docs/decisions.md §1).
import { randomFillSync } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

// Every request takes an id, so random bytes are drawn from the system a pool at a time rather than
// once per id (the way crypto.randomUUID caches its entropy): one call per ~170 request ids.
const POOL_BYTES = 8192;
const pool = Buffer.allocUnsafe(POOL_BYTES);
let poolOffset = POOL_BYTES;

function randomByte(): number {
  if (poolOffset === POOL_BYTES) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  return pool[poolOffset++]!;
}

/** `length` uniformly random base62 characters (rejection sampling keeps them unbiased). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    const byte = randomByte();
    // 248 = 4 × 62: bytes at or above it would favour the first characters.
    if (byte < 248) out += BASE62[byte % 62];
  }
  return out;
}

export type IdPrefix =
  | 'org'
  | 'key'
  | 'req'
  | 'res'
  | 'job'
  | 'sim'
  | 'batch'
  | 'pjob'
  | 'proj'
  | 'we'
  | 'evt'
  | 'whsec';

export function newId(prefix: IdPrefix, length = 20): string {
  return `${prefix}_${randomBase62(length)}`;
}
