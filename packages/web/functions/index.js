// The web app's Cloud Functions code base (`hearth start --functions packages/web/functions`).
// firebase-functions and firebase-admin resolve from the repository's node_modules; deployed on
// its own, `npm install` here brings them.
const { getApps, initializeApp } = require('firebase-admin/app');
const { getAuth } = require('firebase-admin/auth');
const { getFirestore, FieldValue } = require('firebase-admin/firestore');
const { onDocumentWritten } = require('firebase-functions/v2/firestore');

// Another code base may load this one beside its own functions (Hearth's tests do).
if (getApps().length === 0) initializeApp();

/**
 * Keeps users/{uid}.noteCount equal to the number of the user's notes.
 *
 * Events come at least once and in any order, so each create or delete adds +1 or -1 in a
 * transaction that also records its event id under users/{uid}/noteCountEvents: a redelivered
 * event finds its id and changes nothing, and increments commute whatever the order. (A recount
 * would need the count query inside the transaction to be safe against a concurrent older recount
 * landing last; the ledger keeps each event's work to two document reads.)
 * Edits (text only) do not change the count and write nothing. Once the account is deleted nothing
 * is written: Hearth erases users/{uid} then, and the trigger must not bring a document back.
 */
exports.countNotes = onDocumentWritten({ document: 'users/{uid}/notes/{noteId}', retry: true }, async (event) => {
  const change = (event.data.after.exists ? 1 : 0) - (event.data.before.exists ? 1 : 0);
  if (change === 0) return;
  const { uid } = event.params;
  try {
    await getAuth().getUser(uid);
  } catch (err) {
    if (err && err.code === 'auth/user-not-found') return;
    throw err;
  }
  const db = getFirestore();
  const user = db.doc(`users/${uid}`);
  const seen = user.collection('noteCountEvents').doc(event.id);
  await db.runTransaction(async (tx) => {
    const [userSnap, seenSnap] = await Promise.all([tx.get(user), tx.get(seen)]);
    if (seenSnap.exists) return;
    // Not clamped at zero: events come in any order (a delete can be counted before its note's
    // create), and only unclamped sums reach the same total whatever the order. The page shows
    // no count while it is negative.
    tx.set(user, { noteCount: (userSnap.get('noteCount') || 0) + change }, { merge: true });
    tx.set(seen, { at: FieldValue.serverTimestamp() });
  });
});
