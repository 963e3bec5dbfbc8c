import type { FirebaseApp } from 'firebase/app';
import { initializeFirestore, type Firestore } from 'firebase/firestore';

const instances = new WeakMap<FirebaseApp, Firestore>();

/**
 * The document database of the Hearth that served this page: same origin, so reads and writes
 * travel over its WebChannel streams (`/google.firestore.v1.Firestore/{Listen,Write}/channel`).
 */
export function firestoreOf(app: FirebaseApp): Firestore {
  let db = instances.get(app);
  if (!db) {
    db = initializeFirestore(app, { host: window.location.host, ssl: window.location.protocol === 'https:' });
    instances.set(app, db);
  }
  return db;
}
