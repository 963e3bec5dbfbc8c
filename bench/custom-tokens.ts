import { importPKCS8, SignJWT } from 'jose';
import { post, type BenchHearth, type BenchUser } from './hearth-setup.js';

const audience = 'https://identitytoolkit.googleapis.com/google.identity.identitytoolkit.v1.IdentityToolkit';

export const customTokenPath = (apiKey: string) => `/identitytoolkit.googleapis.com/v1/accounts:signInWithCustomToken?key=${apiKey}`;

/**
 * One signInWithCustomToken body per user, each token minted as firebase-admin's createCustomToken
 * does, with a service-account key issued by this Hearth; one is sent first and checked.
 */
export async function customTokenBodies(target: BenchHearth, users: BenchUser[]): Promise<string[]> {
  const response = await fetch(`${target.url}/hearth/v1/projects/${target.hearth.options.defaultProjectId}/serviceAccountKeys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${target.hearth.adminKey}` },
  });
  if (!response.ok) throw new Error(`creating a service-account key answered ${response.status}`);
  const key = (await response.json()) as { private_key: string; client_email: string };
  const privateKey = await importPKCS8(key.private_key, 'RS256');
  const now = Math.floor(Date.now() / 1000);
  const bodies = await Promise.all(
    users.map(async (user) => {
      const token = await new SignJWT({ uid: user.localId, claims: { role: 'bench' } })
        .setProtectedHeader({ alg: 'RS256', typ: 'JWT' })
        .setIssuer(key.client_email)
        .setSubject(key.client_email)
        .setAudience(audience)
        .setIssuedAt(now)
        .setExpirationTime(now + 3600)
        .sign(privateKey);
      return JSON.stringify({ token, returnSecureToken: true });
    }),
  );
  const answer = await post(target.url + customTokenPath(target.apiKey), bodies[0]!, 'application/json');
  if (typeof answer.idToken !== 'string') throw new Error(`signInWithCustomToken gave no ID token: ${JSON.stringify(answer)}`);
  return bodies;
}
