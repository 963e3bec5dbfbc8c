import { RecaptchaVerifier, type Auth } from 'firebase/auth';

/**
 * Runs `work` with an invisible RecaptchaVerifier in `container`: Hearth's stand-in
 * (`/__/auth/recaptcha.js`, loaded by index.html) solves a proof-of-work challenge in this page,
 * so no request goes to Google. A fresh widget each time: a token is good for one code only.
 */
export async function withHumanCheck<T>(auth: Auth, container: HTMLElement | null, work: (verifier: RecaptchaVerifier) => Promise<T>): Promise<T> {
  if (!container) throw new Error('the human check has no place on the page');
  const host = document.createElement('div');
  container.replaceChildren(host);
  const verifier = new RecaptchaVerifier(auth, host, { size: 'invisible' });
  try {
    return await work(verifier);
  } finally {
    verifier.clear();
    container.replaceChildren();
  }
}
