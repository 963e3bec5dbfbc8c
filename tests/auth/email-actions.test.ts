/**
 * Email actions through the official SDK (firebase v12, Node): password reset, verification,
 * email-link sign-in (new user, existing user, linking), verify-before-update with recovery,
 * and the error codes for reused, expired, made-up and stale codes and foreign continue URLs.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  ActionCodeOperation,
  ActionCodeURL,
  EmailAuthProvider,
  applyActionCode,
  checkActionCode,
  confirmPasswordReset,
  createUserWithEmailAndPassword,
  getAdditionalUserInfo,
  isSignInWithEmailLink,
  linkWithCredential,
  reload,
  sendEmailVerification,
  sendPasswordResetEmail,
  sendSignInLinkToEmail,
  signInAnonymously,
  signInWithEmailAndPassword,
  signInWithEmailLink,
  updatePassword,
  verifyBeforeUpdateEmail,
  verifyPasswordResetCode,
  type Auth,
} from 'firebase/auth';
import { deleteApp as deleteAdminApp, initializeApp as initializeAdminApp } from 'firebase-admin/app';
import { getAuth as getAdminAuth } from 'firebase-admin/auth';
import { patchProjectConfig, setEmailPrivacy, uniqueEmail } from '../helpers/admin-http.js';
import { SdkClients, errorCodeOf } from '../helpers/client.js';
import { postJson, startHearth, type TestHearth } from '../helpers/hearth.js';
import { countMail, oobCodes, waitForMail } from '../helpers/outbox.js';

let server: TestHearth;
const continueUrl = 'http://localhost/finish-sign-in';

const clients = new SdkClients('actions');
const newAuth = (target: TestHearth = server): Auth => clients.auth(target);
const codeOf = errorCodeOf;

before(async () => {
  server = await startHearth();
});
after(async () => {
  await clients.close();
  await server.close();
});

describe('password reset', () => {
  test('send, parse the link, verify, confirm; the code is single use and the old password is gone', async () => {
    const email = uniqueEmail('reset');
    await createUserWithEmailAndPassword(newAuth(), email, 'old-password');
    const auth = newAuth();
    await sendPasswordResetEmail(auth, email);
    const mail = await waitForMail(server, email, 'PASSWORD_RESET');
    const parsed = ActionCodeURL.parseLink(mail.oobLink);
    assert.ok(parsed, 'the link parses with ActionCodeURL');
    assert.equal(parsed.operation, ActionCodeOperation.PASSWORD_RESET);
    assert.equal(parsed.code, mail.oobCode);
    assert.equal(parsed.apiKey, server.apiKey);
    assert.equal(await verifyPasswordResetCode(auth, parsed.code), email);
    await confirmPasswordReset(auth, parsed.code, 'new-password');
    assert.equal(await codeOf(confirmPasswordReset(auth, parsed.code, 'other-password')), 'auth/invalid-action-code');
    assert.equal(await codeOf(signInWithEmailAndPassword(newAuth(), email, 'old-password')), 'auth/invalid-credential');
    const { user } = await signInWithEmailAndPassword(newAuth(), email, 'new-password');
    assert.equal(user.emailVerified, true, 'following the mailed link proves the address');
  });

  test('made-up codes, weak new passwords, and codes that a password change made stale', async () => {
    const auth = newAuth();
    assert.equal(await codeOf(verifyPasswordResetCode(auth, 'made-up-code')), 'auth/invalid-action-code');
    assert.equal(await codeOf(applyActionCode(auth, 'made-up-code')), 'auth/invalid-action-code');
    const email = uniqueEmail('stale');
    const { user } = await createUserWithEmailAndPassword(newAuth(), email, 'first-password');
    await sendPasswordResetEmail(auth, email);
    const mail = await waitForMail(server, email, 'PASSWORD_RESET');
    assert.equal(await codeOf(confirmPasswordReset(auth, mail.oobCode, '123')), 'auth/weak-password');
    await new Promise((r) => setTimeout(r, 5));
    await updatePassword(user, 'second-password');
    assert.equal(await codeOf(confirmPasswordReset(auth, mail.oobCode, 'third-password')), 'auth/invalid-action-code');
  });

  test('expired codes give expired-action-code', async () => {
    const shortLived = await startHearth({ oobLifetimes: { defaultMs: 300, emailSignInMs: 300 } });
    try {
      const email = uniqueEmail('expiring');
      await createUserWithEmailAndPassword(newAuth(shortLived), email, 'secret12');
      const auth = newAuth(shortLived);
      await sendPasswordResetEmail(auth, email);
      const mail = await waitForMail(shortLived, email, 'PASSWORD_RESET');
      await new Promise((r) => setTimeout(r, 400));
      assert.equal(await codeOf(verifyPasswordResetCode(auth, mail.oobCode)), 'auth/expired-action-code');
      assert.equal(await codeOf(confirmPasswordReset(auth, mail.oobCode, 'new-secret')), 'auth/expired-action-code');
    } finally {
      await shortLived.close();
    }
  });

  test('a continueUrl off the authorized domains is refused', async () => {
    const email = uniqueEmail('domain');
    await createUserWithEmailAndPassword(newAuth(), email, 'secret12');
    const refused = await codeOf(sendPasswordResetEmail(newAuth(), email, { url: 'https://evil.example/steal' }));
    // The server says UNAUTHORIZED_DOMAIN; the SDK's map turns it into unauthorized-continue-uri.
    assert.equal(refused, 'auth/unauthorized-continue-uri');
    await sendPasswordResetEmail(newAuth(), email, { url: 'http://localhost:3000/done' });
    const mail = await waitForMail(server, email, 'PASSWORD_RESET');
    assert.equal(ActionCodeURL.parseLink(mail.oobLink)?.continueUrl, 'http://localhost:3000/done');
  });

  test('the host Hearth serves on (--public-url) is authorized without being listed', async () => {
    const hosted = await startHearth({ publicUrl: 'https://auth.myapp.test' });
    try {
      const email = uniqueEmail('hosted');
      await createUserWithEmailAndPassword(newAuth(hosted), email, 'secret12');
      await sendPasswordResetEmail(newAuth(hosted), email, { url: 'https://auth.myapp.test/signed-in' });
      const mail = await waitForMail(hosted, email, 'PASSWORD_RESET');
      assert.ok(mail.oobLink.startsWith('https://auth.myapp.test/__/auth/action?'), mail.oobLink);
      assert.equal(await codeOf(sendPasswordResetEmail(newAuth(hosted), email, { url: 'https://other.test/' })), 'auth/unauthorized-continue-uri');
    } finally {
      await hosted.close();
    }
  });
});

describe('email verification', () => {
  test('sendEmailVerification, checkActionCode, applyActionCode, reload', async () => {
    const email = uniqueEmail('verify');
    const { user } = await createUserWithEmailAndPassword(newAuth(), email, 'secret12');
    assert.equal(user.emailVerified, false);
    await sendEmailVerification(user);
    const mail = await waitForMail(server, email, 'VERIFY_EMAIL');
    const auth = newAuth();
    const info = await checkActionCode(auth, mail.oobCode);
    assert.equal(info.operation, ActionCodeOperation.VERIFY_EMAIL);
    assert.equal(info.data.email, email);
    await applyActionCode(auth, mail.oobCode);
    await reload(user);
    assert.equal(user.emailVerified, true);
    assert.equal(await codeOf(applyActionCode(auth, mail.oobCode)), 'auth/invalid-action-code');
  });
});

describe('email-link sign-in', () => {
  test('a new user signs up by link; the same address signs in again by a second link', async () => {
    const email = uniqueEmail('link');
    const auth = newAuth();
    await sendSignInLinkToEmail(auth, email, { url: continueUrl, handleCodeInApp: true });
    const first = await waitForMail(server, email, 'EMAIL_SIGNIN');
    assert.equal(isSignInWithEmailLink(auth, first.oobLink), true);
    assert.equal(ActionCodeURL.parseLink(first.oobLink)?.continueUrl, continueUrl);
    const created = await signInWithEmailLink(auth, email, first.oobLink);
    assert.equal(getAdditionalUserInfo(created)?.isNewUser, true);
    assert.equal(created.user.email, email);
    assert.equal(created.user.emailVerified, true);
    assert.equal(await codeOf(signInWithEmailLink(newAuth(), email, first.oobLink)), 'auth/invalid-action-code');

    const again = newAuth();
    await sendSignInLinkToEmail(again, email, { url: continueUrl, handleCodeInApp: true });
    const second = await waitForMail(server, email, 'EMAIL_SIGNIN', 1);
    const signedIn = await signInWithEmailLink(again, email, second.oobLink);
    assert.equal(getAdditionalUserInfo(signedIn)?.isNewUser, false);
    assert.equal(signedIn.user.uid, created.user.uid);
  });

  test('the link only works for the address it was sent to', async () => {
    const email = uniqueEmail('link-owner');
    const auth = newAuth();
    await sendSignInLinkToEmail(auth, email, { url: continueUrl, handleCodeInApp: true });
    const mail = await waitForMail(server, email, 'EMAIL_SIGNIN');
    assert.equal(await codeOf(signInWithEmailLink(auth, uniqueEmail('someone-else'), mail.oobLink)), 'auth/invalid-email');
  });

  test('an anonymous user links an email by link and keeps its uid', async () => {
    const auth = newAuth();
    const { user } = await signInAnonymously(auth);
    const email = uniqueEmail('link-anon');
    await sendSignInLinkToEmail(auth, email, { url: continueUrl, handleCodeInApp: true });
    const mail = await waitForMail(server, email, 'EMAIL_SIGNIN');
    const linked = await linkWithCredential(user, EmailAuthProvider.credentialWithLink(email, mail.oobLink));
    assert.equal(linked.user.uid, user.uid);
    assert.equal(linked.user.email, email);
    assert.equal(linked.user.isAnonymous, false);
  });

  // The SDK refuses to link a second email credential itself; a raw caller holding a stolen
  // (old) ID token is who these guard against.
  const linkByRest = (target: TestHearth, idToken: string, email: string, oobCode: string) =>
    postJson(`${target.url}/identitytoolkit.googleapis.com/v1/accounts:signInWithEmailLink?key=${target.apiKey}`, { idToken, email, oobCode });

  test('linking a link to an account with another email replaces it and tells the old address', async () => {
    const oldEmail = uniqueEmail('link-old');
    const auth = newAuth();
    const { user } = await createUserWithEmailAndPassword(auth, oldEmail, 'secret12');
    const newEmail = uniqueEmail('link-new');
    await sendSignInLinkToEmail(auth, newEmail, { url: continueUrl, handleCodeInApp: true });
    const mail = await waitForMail(server, newEmail, 'EMAIL_SIGNIN');
    const linked = await linkByRest(server, await user.getIdToken(), newEmail, mail.oobCode);
    assert.equal(linked.status, 200, JSON.stringify(linked.body));
    assert.equal(linked.body.email, newEmail);
    await waitForMail(server, oldEmail, 'RECOVER_EMAIL');
  });

  test('the same long after sign-in needs a recent login', async () => {
    const strict = await startHearth({ recentLoginSeconds: 1 });
    try {
      const auth = newAuth(strict);
      const { user } = await createUserWithEmailAndPassword(auth, uniqueEmail('link-stale'), 'secret12');
      const idToken = await user.getIdToken();
      const newEmail = uniqueEmail('link-hijack');
      await sendSignInLinkToEmail(auth, newEmail, { url: continueUrl, handleCodeInApp: true });
      const mail = await waitForMail(strict, newEmail, 'EMAIL_SIGNIN');
      await new Promise((r) => setTimeout(r, 2100));
      const refused = await linkByRest(strict, idToken, newEmail, mail.oobCode);
      assert.equal(refused.body.error?.message, 'CREDENTIAL_TOO_OLD_LOGIN_AGAIN');
    } finally {
      await strict.close();
    }
  });

  test('switched off (password required): operation-not-allowed', async () => {
    await patchProjectConfig(server, { signIn: { email: { passwordRequired: true } } }, 'signIn.email.passwordRequired');
    try {
      assert.equal(await codeOf(sendSignInLinkToEmail(newAuth(), uniqueEmail(), { url: continueUrl, handleCodeInApp: true })), 'auth/operation-not-allowed');
    } finally {
      await patchProjectConfig(server, { signIn: { email: { passwordRequired: false } } }, 'signIn.email.passwordRequired');
    }
  });
});

describe('verify before update, and recovery', () => {
  test('the change happens only through the link to the new address; the old address can undo it', async () => {
    const oldEmail = uniqueEmail('before');
    const newEmail = uniqueEmail('after');
    const { user } = await createUserWithEmailAndPassword(newAuth(), oldEmail, 'secret12');
    await verifyBeforeUpdateEmail(user, newEmail);
    const change = await waitForMail(server, newEmail, 'VERIFY_AND_CHANGE_EMAIL');
    const auth = newAuth();
    const info = await checkActionCode(auth, change.oobCode);
    assert.equal(info.operation, ActionCodeOperation.VERIFY_AND_CHANGE_EMAIL);
    assert.equal(info.data.email, newEmail);
    assert.equal(info.data.previousEmail, oldEmail);
    assert.equal(await codeOf(signInWithEmailAndPassword(newAuth(), newEmail, 'secret12')), 'auth/invalid-credential', 'not changed before the link is followed');
    await applyActionCode(auth, change.oobCode);
    assert.equal((await signInWithEmailAndPassword(newAuth(), newEmail, 'secret12')).user.uid, user.uid);

    const recovery = await waitForMail(server, oldEmail, 'RECOVER_EMAIL');
    const recoveryInfo = await checkActionCode(auth, recovery.oobCode);
    assert.equal(recoveryInfo.operation, ActionCodeOperation.RECOVER_EMAIL);
    assert.equal(recoveryInfo.data.email, oldEmail);
    assert.equal(recoveryInfo.data.previousEmail, newEmail);
    await applyActionCode(auth, recovery.oobCode);
    assert.equal((await signInWithEmailAndPassword(newAuth(), oldEmail, 'secret12')).user.uid, user.uid);
  });
});

describe('languages, throttling, enumeration protection, administrators', () => {
  test('X-Firebase-Locale picks the template language', async () => {
    const email = uniqueEmail('langue');
    await createUserWithEmailAndPassword(newAuth(), email, 'secret12');
    const auth = newAuth();
    auth.languageCode = 'fr';
    await sendPasswordResetEmail(auth, email);
    const mail = await waitForMail(server, email, 'PASSWORD_RESET');
    assert.equal(ActionCodeURL.parseLink(mail.oobLink)?.languageCode, 'fr');
    const outbox = (await (await fetch(`${server.url}/hearth/v1/projects/${server.projectId}/outbox`, { headers: { authorization: `Bearer ${server.adminKey}` } })).json()) as {
      messages: Array<{ to: string; subject: string; text: string; html: string }>;
    };
    const message = outbox.messages.filter((m) => m.to === email).pop()!;
    assert.match(message.subject, /Réinitialisez votre mot de passe/);
    assert.ok(message.text.includes(mail.oobLink));
    assert.ok(message.html.includes('<a href="'));
  });

  test('sending is throttled per address: too-many-requests', async () => {
    const email = uniqueEmail('flood');
    await createUserWithEmailAndPassword(newAuth(), email, 'secret12');
    const limit = server.hearth.options.mailThrottle.maxFailures;
    for (let i = 0; i < limit; i++) await sendPasswordResetEmail(newAuth(), email);
    assert.equal(await codeOf(sendPasswordResetEmail(newAuth(), email)), 'auth/too-many-requests');
  });

  test('with enumeration protection, a reset for an unknown address answers exactly as for a real one', async () => {
    const known = uniqueEmail('known');
    await createUserWithEmailAndPassword(newAuth(), known, 'secret12');
    const unknown = uniqueEmail('unknown');
    const url = `${server.url}/identitytoolkit.googleapis.com/v1/accounts:sendOobCode?key=${server.apiKey}`;
    const forKnown = await postJson(url, { requestType: 'PASSWORD_RESET', email: known });
    const forUnknown = await postJson(url, { requestType: 'PASSWORD_RESET', email: unknown });
    assert.equal(forKnown.status, 200);
    assert.deepEqual(Object.keys(forKnown.body).sort(), Object.keys(forUnknown.body).sort());
    assert.equal(forUnknown.body.email, unknown);
    await waitForMail(server, known, 'PASSWORD_RESET');
    assert.equal(await countMail(server, unknown, 'PASSWORD_RESET'), 0, 'nothing is sent for an unknown address');

    await setEmailPrivacy(server, false);
    try {
      assert.equal(await codeOf(sendPasswordResetEmail(newAuth(), unknown)), 'auth/user-not-found');
    } finally {
      await setEmailPrivacy(server, true);
    }
  });

  test('with enumeration protection, changing to a taken address answers as for a free one', async () => {
    const taken = uniqueEmail('taken-target');
    await createUserWithEmailAndPassword(newAuth(), taken, 'secret12');
    const { user } = await createUserWithEmailAndPassword(newAuth(), uniqueEmail('changer'), 'secret12');
    await verifyBeforeUpdateEmail(user, taken);
    const free = uniqueEmail('free-target');
    await verifyBeforeUpdateEmail(user, free);
    await waitForMail(server, free, 'VERIFY_AND_CHANGE_EMAIL');
    assert.equal(await countMail(server, taken, 'VERIFY_AND_CHANGE_EMAIL'), 0, 'the owner of the taken address gets nothing');
  });

  test('firebase-admin generates links that work (returnOobLink), without mailing them', async () => {
    process.env.FIREBASE_AUTH_EMULATOR_HOST = server.hostPort;
    const adminApp = initializeAdminApp({ projectId: server.projectId }, 'links-admin');
    try {
      const email = uniqueEmail('admin-link');
      await getAdminAuth(adminApp).createUser({ email, password: 'secret12' });
      const before = (await oobCodes(server)).length;
      const link = await getAdminAuth(adminApp).generateEmailVerificationLink(email);
      assert.equal((await oobCodes(server)).length, before, 'returnOobLink does not mail');
      const parsed = ActionCodeURL.parseLink(link)!;
      assert.equal(parsed.operation, ActionCodeOperation.VERIFY_EMAIL);
      await applyActionCode(newAuth(), parsed.code);
      assert.equal((await getAdminAuth(adminApp).getUserByEmail(email)).emailVerified, true);
      const resetLink = await getAdminAuth(adminApp).generatePasswordResetLink(email);
      await confirmPasswordReset(newAuth(), ActionCodeURL.parseLink(resetLink)!.code, 'changed-by-link');
      await signInWithEmailAndPassword(newAuth(), email, 'changed-by-link');
    } finally {
      delete process.env.FIREBASE_AUTH_EMULATOR_HOST;
      await deleteAdminApp(adminApp);
    }
  });
});
