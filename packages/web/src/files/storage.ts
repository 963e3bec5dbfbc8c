import type { FirebaseApp } from 'firebase/app';
import { connectStorageEmulator, getStorage, type FirebaseStorage } from 'firebase/storage';

const instances = new WeakMap<FirebaseApp, FirebaseStorage>();

/**
 * Cloud Storage of the Hearth that served this page, in the bucket init.json names. The SDK reaches
 * a host other than Google's only through connectStorageEmulator, which builds plain-http URLs: on
 * an https page the page's Content-Security-Policy `upgrade-insecure-requests` (added here, before
 * the first request) makes the browser send every one of them over https instead, and nothing goes
 * out in the clear (without it the browser would block them as mixed content). docs/STORAGE.md,
 * "Production over TLS".
 */
export function storageOf(app: FirebaseApp): FirebaseStorage {
  let storage = instances.get(app);
  if (!storage) {
    const secure = window.location.protocol === 'https:';
    if (secure) upgradeInsecureRequests();
    storage = getStorage(app);
    connectStorageEmulator(storage, window.location.hostname, Number(window.location.port) || (secure ? 443 : 80));
    instances.set(app, storage);
  }
  return storage;
}

function upgradeInsecureRequests(): void {
  if (document.head.querySelector('meta[http-equiv="Content-Security-Policy"][content="upgrade-insecure-requests"]')) return;
  const meta = document.createElement('meta');
  meta.httpEquiv = 'Content-Security-Policy';
  meta.content = 'upgrade-insecure-requests';
  document.head.append(meta);
}

/**
 * A download URL as the page itself would load it: on an https page the SDK's `http://host:443/...`
 * becomes `https://host/...`, so a URL kept elsewhere (a profile's photoURL) works outside this page too.
 */
export function pageUrl(url: string): string {
  if (window.location.protocol !== 'https:') return url;
  const parsed = new URL(url);
  if (parsed.protocol === 'http:' && parsed.hostname === window.location.hostname) {
    parsed.protocol = 'https:';
    if (parsed.port === '443') parsed.port = '';
  }
  return parsed.toString();
}
