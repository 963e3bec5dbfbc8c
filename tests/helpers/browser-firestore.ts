/**
 * firebase v12's browser build of Firestore, loaded in Node: it speaks WebChannel (on fetch streams with the
 * `useFetchStreams` setting, Node having no XMLHttpRequest), as the SDK does in a browser. Load it in a test file
 * that does not also load the Node build: both register the same `firestore` component, and the first one wins.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type * as FirestoreSdk from 'firebase/firestore';
import { repoRoot } from './hearth.js';

export async function loadBrowserFirestore(): Promise<typeof FirestoreSdk> {
  // Not among the package's exports: imported by its file.
  const file = pathToFileURL(join(repoRoot, 'node_modules/@firebase/firestore/dist/index.esm.js')).href;
  return (await import(file)) as typeof FirestoreSdk;
}
