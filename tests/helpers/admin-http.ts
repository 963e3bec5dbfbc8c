import type { TestHearth } from './hearth.js';
import { postJson } from './hearth.js';

/** Changes a project's identity config through the admin API (PATCH /v2/projects/{p}/config). */
export async function patchProjectConfig(server: TestHearth, patch: Record<string, unknown>, updateMask: string): Promise<void> {
  const response = await fetch(`${server.url}/identitytoolkit.googleapis.com/v2/projects/${server.projectId}/config?updateMask=${updateMask}`, {
    method: 'PATCH',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${server.adminKey}` },
    body: JSON.stringify(patch),
  });
  if (!response.ok) throw new Error(`config patch failed: ${response.status} ${await response.text()}`);
}

export async function setEmailPrivacy(server: TestHearth, enabled: boolean): Promise<void> {
  await patchProjectConfig(server, { emailPrivacyConfig: { enableImprovedEmailPrivacy: enabled } }, 'emailPrivacyConfig.enableImprovedEmailPrivacy');
}

/** An admin call with the admin key; returns status and body. */
export function adminPost(server: TestHearth, path: string, body: unknown) {
  return postJson(`${server.url}/identitytoolkit.googleapis.com/v1/projects/${server.projectId}${path}`, body, { authorization: `Bearer ${server.adminKey}` });
}

let counter = 0;
export function uniqueEmail(tag = 'user'): string {
  counter += 1;
  return `${tag}-${process.pid}-${Date.now()}-${counter}@example.com`;
}
