// Where a webhook may be sent (docs/api.md §6, Safety). In production an endpoint's URL must be https
// and its host must not be, nor resolve to, a loopback, private, link-local, shared (CGNAT), multicast or
// cloud-metadata address, unless WEBHOOKS_ALLOW_PRIVATE is set. The check runs at registration and again
// on every connection, inside the socket's own DNS lookup (`guardedLookup`), so a name that resolves to
// a public address at registration and to 169.254.169.254 later is refused when it matters.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { ApiError } from '../errors.js';

export interface UrlPolicy {
  /** NODE_ENV=production and WEBHOOKS_ALLOW_PRIVATE unset: https only, public addresses only. */
  publicOnly: boolean;
}

/** Longest URL accepted (what browsers and load balancers commonly take). */
export const URL_MAX_LENGTH = 2048;

// RFC 6890's special-purpose ranges a webhook has no business reaching.
const blocked = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  blocked.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['64:ff9b::', 96],
] as const) {
  blocked.addSubnet(network, prefix, 'ipv6');
}

/** An IPv4-mapped IPv6 address (::ffff:10.0.0.1) is judged as the IPv4 address it carries. */
function mappedIpv4(address: string): string | null {
  const match = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return match ? match[1]! : null;
}

export function isPrivateAddress(address: string): boolean {
  const v4 = mappedIpv4(address);
  if (v4) return blocked.check(v4, 'ipv4');
  const family = isIP(address);
  if (family === 4) return blocked.check(address, 'ipv4');
  if (family === 6) return blocked.check(address, 'ipv6');
  return true;
}

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
