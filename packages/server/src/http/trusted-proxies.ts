import { isIP } from 'node:net';

/**
 * `--trust-proxy ADDRESSES` (or HEARTH_TRUST_PROXY): the reverse proxies whose X-Forwarded-For is
 * believed. Every per-address limit (sign-in throttles, sign-ups, captcha challenges, console key
 * lockouts, texts, WebChannel sessions) reads `request.ip`; behind a proxy that is the proxy's
 * address, so every user would share one budget. Fastify's trustProxy (proxy-addr) then walks
 * X-Forwarded-For from the right while the hop it came from is trusted: `request.ip` is the first
 * address no trusted proxy vouches for, so a client cannot forge its address unless it connects
 * from a trusted one. Without the flag X-Forwarded-For is ignored.
 */

/** proxy-addr's names for ranges: 127.0.0.1/8 and ::1; 169.254.0.0/16 and fe80::/10; 10/8, 172.16/12, 192.168/16 and fc00::/7. */
const namedRanges = new Set(['loopback', 'linklocal', 'uniquelocal']);

/** The comma-separated list as Fastify's trustProxy takes it; throws a message naming the bad entry. */
export function parseTrustedProxies(text: string): string[] {
  const entries = text
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  if (entries.length === 0) throw new Error('--trust-proxy needs at least one address or CIDR range');
  for (const entry of entries) {
    if (!isAddressOrRange(entry)) throw new Error(`--trust-proxy: "${entry}" is not an IP address, a CIDR range (10.0.0.0/8, fd00::/8) or one of ${[...namedRanges].join(', ')}`);
  }
  return entries;
}

function isAddressOrRange(entry: string): boolean {
  if (namedRanges.has(entry)) return true;
  const [address = '', bits, extra] = entry.split('/');
  if (extra !== undefined) return false;
  const family = isIP(address);
  if (family === 0) return false;
  if (bits === undefined) return true;
  if (!/^\d{1,3}$/.test(bits)) return false;
  return Number(bits) <= (family === 4 ? 32 : 128);
}
