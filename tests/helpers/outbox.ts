import type { TestHearth } from './hearth.js';

export interface OobEntry {
  email: string;
  requestType: string;
  oobCode: string;
  oobLink: string;
}

/** The emulator-shaped list of mailed codes (GET /emulator/v1/projects/{p}/oobCodes). */
export async function oobCodes(server: TestHearth): Promise<OobEntry[]> {
  const response = await fetch(`${server.url}/emulator/v1/projects/${server.projectId}/oobCodes`, { headers: { authorization: `Bearer ${server.adminKey}` } });
  if (!response.ok) throw new Error(`oobCodes: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { oobCodes: OobEntry[] }).oobCodes;
}

/**
 * Waits for the newest mail of a type to an address. Mails may be issued after the answer (with
 * enumeration protection on, the answer never waits for them), hence the polling.
 */
export async function waitForMail(server: TestHearth, email: string, requestType: string, after = 0, timeoutMs = 5000): Promise<OobEntry> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const matches = (await oobCodes(server)).filter((entry) => entry.email === email.toLowerCase() && entry.requestType === requestType);
    if (matches.length > after) return matches[matches.length - 1]!;
    if (Date.now() > deadline) throw new Error(`no ${requestType} mail to ${email} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function countMail(server: TestHearth, email: string, requestType: string): Promise<number> {
  return (await oobCodes(server)).filter((entry) => entry.email === email.toLowerCase() && entry.requestType === requestType).length;
}
