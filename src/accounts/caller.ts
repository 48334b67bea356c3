// Who is calling: an authenticated API key, its organisation and its mode. The HTTP layer builds it
// (src/http/auth.ts); the domain takes it as a plain value.
import type { ApiKey, KeyMode } from './keys.js';
import type { Org } from './orgs.js';

export interface Caller {
  org: Org;
  key: ApiKey;
  mode: KeyMode;
  /** Live keys: real output and charges; test keys: synthetic output, nothing charged. */
  livemode: boolean;
}
