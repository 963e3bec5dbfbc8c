/** The secure-token endpoint as the SDKs call it: a refresh token for a fresh ID token. */
export async function refreshIdToken(origin: string, apiKey: string, refreshToken: string): Promise<{ status: number; body: { user_id: string; id_token: string } }> {
  const response = await fetch(`${origin}/securetoken.googleapis.com/v1/token?key=${apiKey}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken }),
  });
  return { status: response.status, body: (await response.json()) as { user_id: string; id_token: string } };
}
