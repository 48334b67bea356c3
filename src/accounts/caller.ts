// Who is calling: an authenticated API key, its organisation and its mode. The HTTP layer builds it
// (src/http/auth.ts); the domain takes it as a plain value.
import type { ApiKey, KeyMode, Owner } from './keys.js';
import type { Org } from './orgs.js';

export interface Caller {
  org: Org;
  key: ApiKey;
  mode: KeyMode;
  /** Live keys: real output and charges; test keys: synthetic output, nothing charged. */
  livemode: boolean;
}

/** Whose objects a caller may see: its organisation's, in its key's mode (live or test). */
export function ownerOf(caller: Caller): Owner {
  return { orgId: caller.org.id, mode: caller.mode };
}

/** A thing is the caller's when its organisation and mode are the caller's; anyone else's is unknown to it. */
export function belongsTo(thing: Owner, caller: Caller): boolean {
  return thing.orgId === caller.org.id && thing.mode === caller.mode;
}
