// Which addresses a webhook may reach in production (docs/api.md §6.3, "Where events may go"): none that
// the IANA special-purpose address registries (IPv4 and IPv6, RFC 6890 and its updates) mark as not
// globally reachable, no IPv4 multicast, no IPv6 outside global unicast (2000::/3), and no IPv6 address
// that embeds such an IPv4 address (IPv4-mapped, IPv4-compatible, NAT64, 6to4, Teredo), which would
// reach it through a translator or relay. Used at registration and in each connection's DNS lookup
// (url-guard.ts).
import { BlockList, isIP } from 'node:net';

/**
 * IPv4 blocks refused: the registry's blocks whose "Globally Reachable" is False or N/A, and multicast.
 * Where a refused block holds a globally reachable anycast address (192.0.0.9, 192.0.0.10 in
 * 192.0.0.0/24), it is refused with the block: no webhook receiver lives there.
 */
export const REFUSED_IPV4: ReadonlyArray<readonly [network: string, prefix: number, name: string]> = [
  ['0.0.0.0', 8, '"this network"'],
  ['10.0.0.0', 8, 'private use'],
  ['100.64.0.0', 10, 'shared address space (CGNAT)'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link local (cloud metadata)'],
  ['172.16.0.0', 12, 'private use'],
  ['192.0.0.0', 24, 'IETF protocol assignments'],
  ['192.0.2.0', 24, 'documentation (TEST-NET-1)'],
  ['192.88.99.0', 24, 'deprecated 6to4 relay anycast'],
  ['192.168.0.0', 16, 'private use'],
  ['198.18.0.0', 15, 'benchmarking'],
  ['198.51.100.0', 24, 'documentation (TEST-NET-2)'],
  ['203.0.113.0', 24, 'documentation (TEST-NET-3)'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved, limited broadcast'],
];

/**
 * IPv6 blocks refused inside global unicast (2000::/3; everything outside it is refused: loopback,
 * unspecified, discard-only 100::/64, unique local fc00::/7, link local fe80::/10, site local fec0::/10,
 * multicast ff00::/8, segment routing 5f00::/16, local-use NAT64 64:ff9b:1::/48, unassigned space), but
 * for the embedded-IPv4 forms, judged by what they embed. 2001::/23's globally reachable anycast and
 * identifier blocks (2001:1::1/128 … 2001:30::/28) are refused with it; Teredo 2001::/32 inside it is
 * judged by its embedded addresses.
 */
export const REFUSED_IPV6: ReadonlyArray<readonly [network: string, prefix: number, name: string]> = [
  ['2001::', 23, 'IETF protocol assignments (benchmarking, ORCHID, …)'],
  ['2001:db8::', 32, 'documentation'],
  ['3fff::', 20, 'documentation'],
];

const refusedV4 = new BlockList();
for (const [network, prefix] of REFUSED_IPV4) refusedV4.addSubnet(network, prefix, 'ipv4');
const refusedV6 = new BlockList();
for (const [network, prefix] of REFUSED_IPV6) refusedV6.addSubnet(network, prefix, 'ipv6');
const globalUnicast = new BlockList();
globalUnicast.addSubnet('2000::', 3, 'ipv6');

/** An IPv6 address (valid, as isIP says) as its eight 16-bit groups. */
function ipv6Groups(address: string): number[] {
  let text = address.replace(/%.*$/, '');
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((group) => parseInt(group, 16)));
  const [head = '', tail] = text.split('::');
  if (tail === undefined) return parse(head);
  const left = parse(head);
  const right = parse(tail);
  return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
}

function ipv4Of(high: number, low: number): string {
  return `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;
}

/**
 * The IPv4 addresses an IPv6 address carries for a translator or relay to reach, or null when it is not
 * one of those forms: IPv4-mapped ::ffff:0:0/96, IPv4-compatible ::/96 (:: and ::1 included: 0.0.0.0 and
 * 0.0.0.1), NAT64 64:ff9b::/96 (RFC 6052), 6to4 2002::/16 (RFC 3056: bits 16-47), Teredo 2001::/32
 * (RFC 4380: the server in bits 32-63, the client in bits 96-127 with every bit inverted).
 */
export function embeddedIpv4(address: string): string[] | null {
  const g = ipv6Groups(address) as [number, number, number, number, number, number, number, number];
  const zeroFrom = (from: number, to: number) => g.slice(from, to).every((group) => group === 0);
  if (zeroFrom(0, 5) && (g[5] === 0xffff || g[5] === 0)) return [ipv4Of(g[6], g[7])];
  if (g[0] === 0x64 && g[1] === 0xff9b && zeroFrom(2, 6)) return [ipv4Of(g[6], g[7])];
  if (g[0] === 0x2002) return [ipv4Of(g[1], g[2])];
  if (g[0] === 0x2001 && g[1] === 0) return [ipv4Of(g[2], g[3]), ipv4Of(g[6] ^ 0xffff, g[7] ^ 0xffff)];
  return null;
}

/** Whether a webhook must not reach this address (anything that is not an IP address included). */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return refusedV4.check(address, 'ipv4');
  if (family !== 6) return true;
  const embedded = embeddedIpv4(address);
  if (embedded) return embedded.some((v4) => refusedV4.check(v4, 'ipv4'));
  const bare = address.replace(/%.*$/, '');
  return !globalUnicast.check(bare, 'ipv6') || refusedV6.check(bare, 'ipv6');
}
