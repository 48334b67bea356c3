// Public identifiers and secrets: a prefix and random base62 characters (docs/decisions.md §1).
import { randomBytes } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** `length` uniformly random base62 characters (rejection sampling keeps them unbiased). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

export type IdPrefix = 'org' | 'key' | 'req' | 'res' | 'job' | 'sim' | 'batch';

export function newId(prefix: IdPrefix, length = 20): string {
  return `${prefix}_${randomBase62(length)}`;
}
