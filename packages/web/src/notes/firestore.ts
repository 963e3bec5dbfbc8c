import type { FirebaseApp } from 'firebase/app';
import { initializeFirestore, type Firestore } from 'firebase/firestore';

const instances = new WeakMap<FirebaseApp, Firestore>();

/**
 * The document database of the Hearth that served this page: same origin, so reads and writes
 * travel over its WebChannel streams (`/google.firestore.v1.Firestore/{Listen,Write}/channel`).
 */
export function firestoreOf(app: FirebaseApp, pathPrefix = ''): Firestore {
  let db = instances.get(app);
  if (!db) {
    // The SDK builds its URLs as `${host}/google.firestore.v1.Firestore/...`, so a path after the host is kept.
    db = initializeFirestore(app, { host: `${window.location.host}${pathPrefix}`, ssl: window.location.protocol === 'https:' });
    instances.set(app, db);
  }
  return db;
}
