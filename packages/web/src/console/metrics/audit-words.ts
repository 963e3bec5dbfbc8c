import type { AuditEntry } from './AuditPage';

/** The kinds of change an operator filters the audit log by. */
export const auditActions = ['Console sign-in', 'Accounts', 'Sign-in settings', 'Documents', 'Rules', 'Files', 'Mail and texts', 'Other'] as const;
export type AuditAction = (typeof auditActions)[number];

export interface AuditWords {
  action: AuditAction;
  /** What changed, in a sentence. */
  text: string;
}

type Body = Record<string, unknown>;

/** The body the summary carries ("METHOD path {json}"), or null when there is none or it was cut. */
function bodyOf(entry: AuditEntry): Body | null {
  const rest = entry.summary.slice(`${entry.method} ${entry.path}`.length).trim();
  if (!rest.startsWith('{')) return null;
  try {
    const parsed: unknown = JSON.parse(rest);
    return typeof parsed === 'object' && parsed !== null ? (parsed as Body) : null;
  } catch {
    return null;
  }
}

const onOff = (value: unknown) => (value ? 'on' : 'off');
const last = (path: string) => decodeURIComponent(path.slice(path.lastIndexOf('/') + 1));

function settingsWords(body: Body | null): string {
  const signIn = (body?.signIn ?? {}) as { email?: { enabled?: unknown; passwordRequired?: unknown }; anonymous?: { enabled?: unknown }; phoneNumber?: { enabled?: unknown } };
  const parts: string[] = [];
  if (signIn.email?.enabled !== undefined) parts.push(`email and password ${onOff(signIn.email.enabled)}`);
  if (signIn.email?.passwordRequired !== undefined) parts.push(`email link ${onOff(!signIn.email.passwordRequired)}`);
  if (signIn.anonymous?.enabled !== undefined) parts.push(`anonymous sign-in ${onOff(signIn.anonymous.enabled)}`);
  if (signIn.phoneNumber?.enabled !== undefined) parts.push(`phone sign-in ${onOff(signIn.phoneNumber.enabled)}`);
  if (Array.isArray(body?.authorizedDomains)) parts.push(`authorized domains set to ${(body.authorizedDomains as unknown[]).join(', ') || 'none'}`);
  if (body?.apiKeys !== undefined) parts.push('API keys changed');
  if (body?.mfa !== undefined) parts.push('two-step verification settings changed');
  return parts.length ? `Sign-in settings: ${parts.join('; ')}` : 'Changed the sign-in settings';
}

function accountWords(entry: AuditEntry, body: Body | null): string {
  const who = typeof body?.localId === 'string' ? body.localId : typeof body?.email === 'string' ? body.email : 'an account';
  const verb = entry.path.slice(entry.path.lastIndexOf(':') + 1);
  if (verb === 'delete') return `Deleted account ${who}`;
  if (verb === 'batchDelete') return `Deleted ${Array.isArray(body?.localIds) ? body.localIds.length : 'several'} accounts`;
  if (verb === 'batchCreate') return `Imported ${Array.isArray(body?.users) ? body.users.length : 'several'} accounts`;
  if (verb === 'sendOobCode') return `Sent a ${String(body?.requestType ?? 'mail').toLowerCase().replaceAll('_', ' ')} to ${String(body?.email ?? who)}`;
  if (verb === 'update') {
    const changes: string[] = [];
    if (body?.disableUser === true) changes.push('disabled');
    if (body?.disableUser === false) changes.push('enabled');
    if (body?.customAttributes !== undefined) changes.push('custom claims changed');
    if (body?.email !== undefined) changes.push(`email set to ${String(body.email)}`);
    if (body?.password !== undefined) changes.push('a new password set');
    if (body?.emailVerified !== undefined) changes.push(`email ${body.emailVerified ? 'marked verified' : 'marked unverified'}`);
    if (body?.validSince !== undefined) changes.push('signed out everywhere');
    return `Account ${who}: ${changes.length ? changes.join(', ') : 'changed'}`;
  }
  if (entry.path.endsWith('/accounts') || verb === 'signUp') return `Created account ${String(body?.email ?? body?.localId ?? '')}`.trim();
  return `Changed accounts (${verb})`;
}

/** What an audit entry did, in words, and the kind of change it was. */
export function auditWords(entry: AuditEntry): AuditWords {
  const body = bodyOf(entry);
  const { method, path } = entry;
  let words: AuditWords;
  if (path === '/hearth/v1/console/session') {
    words = { action: 'Console sign-in', text: method === 'DELETE' ? 'Signed out of the console' : entry.status < 400 ? 'Signed in to the console' : 'A console sign-in was refused' };
  } else if (/\/config$/.test(path) && path.includes('identitytoolkit')) {
    words = { action: 'Sign-in settings', text: settingsWords(body) };
  } else if (path.includes('/accounts')) {
    words = { action: 'Accounts', text: accountWords(entry, body) };
  } else if (path.includes('/documents')) {
    const document = path.slice(path.indexOf('/documents') + '/documents'.length).replace(/^\//, '');
    const text = document.endsWith(':commit') ? `Committed ${Array.isArray(body?.writes) ? body.writes.length : 'some'} document writes` : method === 'DELETE' ? `Deleted document ${document}` : method === 'PATCH' ? `Saved document ${document}` : `Wrote to ${document || 'the database'}`;
    words = { action: 'Documents', text };
  } else if (path.includes('google.firestore.v1.Firestore/Write')) {
    words = { action: 'Documents', text: 'Wrote documents from the live view' };
  } else if (/ruleset|release|\/rules/.test(path)) {
    words = { action: 'Rules', text: method === 'DELETE' ? 'Deleted a rules release' : path.includes('release') ? `Released rules (${last(path)})` : 'Deployed new rules' };
  } else if (path.startsWith('/v0/b/') || path.includes('/storage/v1/') || path.includes('/upload/')) {
    words = { action: 'Files', text: method === 'DELETE' ? `Deleted file ${last(path)}` : 'Uploaded or changed a file' };
  } else if (/outbox|verificationCodes/i.test(path)) {
    words = { action: 'Mail and texts', text: method === 'DELETE' ? 'Cleared the outbox' : 'Changed the outbox' };
  } else {
    words = { action: 'Other', text: `${method === 'DELETE' ? 'Deleted' : method === 'POST' ? 'Posted to' : 'Changed'} ${path}` };
  }
  if (entry.status >= 400 && words.action !== 'Console sign-in') words.text += ` (refused: ${entry.status})`;
  return words;
}
