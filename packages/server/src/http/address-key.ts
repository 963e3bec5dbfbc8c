/**
 * What counts as one client address for a limit: an IPv4 address (IPv4-mapped IPv6 included), or
 * an IPv6 /64, since one IPv6 host usually holds a whole /64 and could otherwise rotate through it.
 */
export function addressKey(ip: string): string {
  const v4 = /^(?:::ffff:)?(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (v4) return v4[1]!;
  if (!ip.includes(':')) return ip;
  const [head = '', tail = ''] = ip.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = ip.includes('::') ? [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right] : left;
  return `${groups.slice(0, 4).map((group) => group.replace(/^0+(?=.)/, '').toLowerCase()).join(':')}::/64`;
}

/** The address a request's per-address limits count (behind --trust-proxy, the client's, not the proxy's). */
export function clientAddressOf(request: { ip: string }): string {
  return addressKey(request.ip);
}
