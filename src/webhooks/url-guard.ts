// Where a webhook may be sent (docs/api.md §6.3, "Where events may go"). In production an endpoint's URL
// must be https and its host must not be, nor resolve to, an address that is not globally reachable
// (reserved-addresses.ts: loopback, private, link-local, shared, documentation, multicast, cloud metadata,
// and the IPv6 forms that embed one of them), unless WEBHOOKS_ALLOW_PRIVATE is set. The check runs at
// registration and again on every connection, inside the socket's own DNS lookup (`guardedLookup`), so a
// name that resolves to a public address at registration and to 169.254.169.254 later is refused when it
// matters.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import { ApiError } from '../errors.js';
import { isPrivateAddress } from './reserved-addresses.js';

export interface UrlPolicy {
  /** NODE_ENV=production and WEBHOOKS_ALLOW_PRIVATE unset: https only, public addresses only. */
  publicOnly: boolean;
}

/** Longest URL accepted (what browsers and load balancers commonly take). */
export const URL_MAX_LENGTH = 2048;

function refused(message: string): ApiError {
  return new ApiError('webhook_url_refused', { message, param: 'url' });
}

/** The host of a URL without IPv6 brackets. */
function hostOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '');
}

/**
 * The URL's form: http(s), no credentials, and under the policy https and no private address literal.
 * Returns the parsed URL.
 */
export function checkUrlForm(raw: string, policy: UrlPolicy): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refused('The URL is not a valid absolute URL.');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw refused('The URL must be http or https.');
  if (url.username || url.password) throw refused('The URL must not carry credentials.');
  if (!policy.publicOnly) return url;
  if (url.protocol !== 'https:') throw refused('The URL must be https.');
  const host = hostOf(url);
  if (isIP(host) && isPrivateAddress(host)) throw refused(`The address ${host} is not public.`);
  return url;
}

type Lookup = typeof dnsLookup;

/** Every address the name resolves to (a name with one private address among public ones is refused). */
function resolveAll(lookup: Lookup, host: string): Promise<LookupAddress[]> {
  return new Promise((resolve, reject) => {
    lookup(host, { all: true }, (error, addresses) => (error ? reject(error) : resolve(addresses)));
  });
}

/** Registration: the form, then (under the policy) every address the host resolves to. */
export async function checkEndpointUrl(
  raw: string,
  policy: UrlPolicy,
  lookup: Lookup = dnsLookup,
): Promise<URL> {
  const url = checkUrlForm(raw, policy);
  const host = hostOf(url);
  if (!policy.publicOnly || isIP(host)) return url;
  let addresses: LookupAddress[];
  try {
    addresses = await resolveAll(lookup, host);
  } catch {
    throw refused(`The host ${host} does not resolve.`);
  }
  const inside = addresses.find((entry) => isPrivateAddress(entry.address));
  if (inside) throw refused(`The host ${host} resolves to ${inside.address}, which is not public.`);
  return url;
}

/**
 * The socket's DNS lookup under the policy: the connection fails (EADDRNOTAVAIL-like, with a message)
 * when any address of the name is private. Node calls it for names only; address literals are checked
 * by checkUrlForm before the request.
 */
export function guardedLookup(policy: UrlPolicy, lookup: Lookup = dnsLookup) {
  return (
    hostname: string,
    options: { all?: boolean; family?: number | string },
    callback: (error: Error | null, address: string | LookupAddress[], family?: number) => void,
  ) => {
    lookup(hostname, { all: true, family: Number(options.family) || 0 }, (error, addresses) => {
      if (error) return callback(error, '');
      const inside = policy.publicOnly
        ? addresses.find((entry) => isPrivateAddress(entry.address))
        : undefined;
      if (inside) {
        return callback(new Error(`${hostname} resolves to ${inside.address}, which is not public`), '');
      }
      if (options.all) return callback(null, addresses);
      const first = addresses[0];
      if (!first) return callback(new Error(`${hostname} has no address`), '');
      return callback(null, first.address, first.family);
    });
  };
}
