/** Addresses only this machine can reach. */
const loopbackHosts = new Set(['127.0.0.1', '::1', 'localhost', '[::1]']);

export function isLoopbackHost(host: string): boolean {
  return loopbackHosts.has(host.toLowerCase()) || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

export type DevExposure = { verdict: 'fine' } | { verdict: 'refuse'; message: string } | { verdict: 'warn'; message: string };

/**
 * --dev opens every account and document to whoever can reach the port (`Bearer owner` is the
 * administrator, unsigned tokens are users, a database without rules is open), so beyond loopback
 * it needs the operator to say so explicitly, and is then announced loudly on every start.
 */
export function devExposure(options: { dev: boolean; host: string; devAllowRemote: boolean }): DevExposure {
  if (!options.dev || isLoopbackHost(options.host)) return { verdict: 'fine' };
  const danger = `--dev on ${options.host} lets anyone who can reach this address act as administrator (\`Bearer owner\`), sign in as any user with an unsigned token, and read and write every document`;
  if (!options.devAllowRemote) return { verdict: 'refuse', message: `refusing to start: ${danger}. Listen on 127.0.0.1, drop --dev, or add --dev-allow-remote if that is really meant.` };
  return { verdict: 'warn', message: `WARNING: ${danger} (--dev-allow-remote was given).` };
}
