import { ConsoleApiError, consoleRequest, errorMessageOf } from '../api';

/**
 * Cloud Storage as the console reaches it: the same JSON API and v0 API that firebase-admin and
 * firebase/storage use, same-origin with the console session (the administrator: storage rules do
 * not apply to it), never the admin key.
 */

/** An object's JSON API resource (storage#object), the fields the console shows. */
export interface StoredFile {
  name: string;
  bucket: string;
  size: string;
  contentType?: string;
  contentEncoding?: string;
  contentDisposition?: string;
  contentLanguage?: string;
  cacheControl?: string;
  timeCreated: string;
  updated: string;
  generation: string;
  metageneration: string;
  md5Hash: string;
  crc32c: string;
  /** Custom metadata; Firebase keeps download tokens here as `firebaseStorageDownloadTokens`. */
  metadata?: Record<string, string>;
}

export interface FolderPage {
  folders: string[];
  files: StoredFile[];
  nextPageToken?: string;
}

export const downloadTokensKey = 'firebaseStorageDownloadTokens';

const encode = encodeURIComponent;
const jsonObjects = (bucket: string) => `/storage/v1/b/${encode(bucket)}/o`;
const v0Objects = (bucket: string) => `/v0/b/${encode(bucket)}/o`;

/** The default bucket of a project, as a Firebase config names it. */
export function defaultBucketOf(projectId: string): string {
  return `${projectId}.appspot.com`;
}

/** One page of a folder: its subfolders and the objects directly in it. */
export async function listFolder(bucket: string, prefix: string, pageToken?: string): Promise<FolderPage> {
  const query = new URLSearchParams({ prefix, delimiter: '/', maxResults: '200', ...(pageToken ? { pageToken } : {}) });
  const page = await consoleRequest<{ items?: StoredFile[]; prefixes?: string[]; nextPageToken?: string }>(`${jsonObjects(bucket)}?${query}`);
  return { folders: page.prefixes ?? [], files: page.items ?? [], ...(page.nextPageToken ? { nextPageToken: page.nextPageToken } : {}) };
}

export function getFile(bucket: string, name: string): Promise<StoredFile> {
  return consoleRequest<StoredFile>(`${jsonObjects(bucket)}/${encode(name)}`);
}

export interface FileChanges {
  contentType?: string | null;
  cacheControl?: string | null;
  contentDisposition?: string | null;
  /** A key set to null is removed. */
  metadata?: Record<string, string | null>;
}

export function updateFile(bucket: string, name: string, changes: FileChanges): Promise<StoredFile> {
  return consoleRequest<StoredFile>(`${jsonObjects(bucket)}/${encode(name)}`, { method: 'PATCH', body: changes });
}

export async function deleteFile(bucket: string, name: string): Promise<void> {
  await consoleRequest(`${v0Objects(bucket)}/${encode(name)}`, { method: 'DELETE', text: true });
}

/** A new download token (the object's download URLs then include one more). */
export async function createDownloadToken(bucket: string, name: string): Promise<void> {
  await consoleRequest(`${v0Objects(bucket)}/${encode(name)}?create_token=true`, { method: 'POST', text: true });
}

/** Revokes a download token: URLs carrying it stop working (the last one is replaced by a new one). */
export async function revokeDownloadToken(bucket: string, name: string, token: string): Promise<void> {
  await consoleRequest(`${v0Objects(bucket)}/${encode(name)}?delete_token=${encode(token)}`, { method: 'POST', text: true });
}

/** The download URL a token makes (what getDownloadURL hands out), on this origin. */
export function downloadUrl(bucket: string, name: string, token: string): string {
  return `${window.location.origin}${v0Objects(bucket)}/${encode(name)}?alt=media&token=${encode(token)}`;
}

async function send(path: string, init: RequestInit): Promise<Response> {
  let response: Response;
  try {
    response = await fetch(path, { ...init, credentials: 'same-origin', headers: { 'X-Hearth-Console': '1', ...(init.headers as Record<string, string> | undefined) } });
  } catch {
    throw new ConsoleApiError(0, errorMessageOf(0, undefined), undefined);
  }
  if (!response.ok) {
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON: the status says enough
    }
    throw new ConsoleApiError(response.status, errorMessageOf(response.status, parsed), parsed);
  }
  return response;
}

/** Uploads a file into a folder under its own name (the browser streams it; nothing is read into memory here). */
export async function uploadFile(bucket: string, prefix: string, file: File): Promise<void> {
  await send(`${v0Objects(bucket)}?name=${encode(prefix + file.name)}`, {
    method: 'POST',
    headers: { 'content-type': file.type || 'application/octet-stream' },
    body: file,
  });
}

/** Saves an object's bytes as a file the browser downloads. */
export async function downloadFile(bucket: string, name: string): Promise<void> {
  const response = await send(`${v0Objects(bucket)}/${encode(name)}?alt=media`, { method: 'GET' });
  const url = URL.createObjectURL(await response.blob());
  const link = document.createElement('a');
  link.href = url;
  link.download = name.split('/').pop() || 'file';
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/** Byte counts as people read them. */
export function readableBytes(value: string | number): string {
  const bytes = Number(value);
  if (!Number.isFinite(bytes)) return String(value);
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  if (bytes < 1024 ** 3) return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
  return `${(bytes / 1024 ** 3).toFixed(2)} GiB`;
}
