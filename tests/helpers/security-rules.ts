/**
 * Releasing Firestore security rules to Hearth or Google's emulator in tests, through the
 * emulator endpoint both serve (`PUT /emulator/v1/projects/{p}:securityRules`).
 */

/** Hearth's --dev policy before rules existed, and Google's emulator's test policy: signed-in users only. */
export const signedInOnlyRules = `rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /{document=**} {
      allow read, write: if request.auth != null;
    }
  }
}
`;

/** What no rules mean in --dev and in Google's emulator: everyone may do everything. */
export const openRules = `rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /{document=**} {
      allow read, write: if true;
    }
  }
}
`;

/** `url`: the server's origin. `Bearer owner` is the admin of both in --dev. */
export async function releaseRules(url: string, projectId: string, source: string, authorization = 'Bearer owner'): Promise<void> {
  const response = await fetch(`${url}/emulator/v1/projects/${projectId}:securityRules`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json', authorization },
    body: JSON.stringify({ rules: { files: [{ name: 'firestore.rules', content: source }] } }),
  });
  if (!response.ok) throw new Error(`releasing rules failed: ${response.status} ${await response.text()}`);
}

/** Runs `body` with `source` in force, then opens the database again (as it was without rules). */
export async function withRules<T>(url: string, projectId: string, source: string, body: () => Promise<T>): Promise<T> {
  await releaseRules(url, projectId, source);
  try {
    return await body();
  } finally {
    await releaseRules(url, projectId, openRules);
  }
}
