import { useState, type FormEvent } from 'react';
import { useConsole } from '../ConsoleApp';
import { ErrorNote, useAction } from '../ui';
import { simulateStorage, type SimulateAnswer, type StorageObjectShape, type StorageSimulateRequest } from './rules-api';
import { Verdict } from './Verdict';

type Method = StorageSimulateRequest['method'];

function parseMetadata(text: string): Record<string, string> | undefined {
  if (!text.trim()) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new Error(`Custom metadata is not valid JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value) || Object.values(value).some((entry) => typeof entry !== 'string')) {
    throw new Error('Custom metadata must be a JSON object of strings, like {"owner": "alice"}.');
  }
  return value as Record<string, string>;
}

function parseClaims(text: string): Record<string, unknown> {
  if (!text.trim()) return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new Error(`Claims are not valid JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('Claims must be a JSON object.');
  return value as Record<string, unknown>;
}

/**
 * Simulates one Cloud Storage request against the storage rules in the editor: a read, list or
 * delete of a stored object (its metadata is `resource`, as stored), or an upload described by its
 * size, content type and custom metadata (`request.resource`).
 */
export function StoragePlayground({ source }: { source: string }) {
  const { projectId } = useConsole();
  const [bucket, setBucket] = useState(`${projectId}.appspot.com`);
  const [method, setMethod] = useState<Method>('create');
  const [path, setPath] = useState('users/alice/photo');
  const [signedIn, setSignedIn] = useState(true);
  const [uid, setUid] = useState('alice');
  const [claims, setClaims] = useState('{}');
  const [size, setSize] = useState('1024');
  const [contentType, setContentType] = useState('image/png');
  const [metadata, setMetadata] = useState('');
  const [answer, setAnswer] = useState<SimulateAnswer | null>(null);
  const action = useAction();
  const writes = method === 'create' || method === 'update';

  function run(event: FormEvent) {
    event.preventDefault();
    setAnswer(null);
    void action.run(async () => {
      let incoming: StorageObjectShape | undefined;
      if (writes) {
        const bytes = Number(size);
        if (!Number.isSafeInteger(bytes) || bytes < 0) throw new Error('Size must be a whole number of bytes.');
        const custom = parseMetadata(metadata);
        incoming = { size: bytes, ...(contentType ? { contentType } : {}), ...(custom ? { metadata: custom } : {}) };
      }
      const request: StorageSimulateRequest = {
        source,
        bucket: bucket.trim(),
        method,
        path: path.replace(/^\/+/, ''),
        auth: signedIn ? { uid, token: parseClaims(claims) } : null,
        ...(incoming ? { request: incoming } : {}),
      };
      setAnswer(await simulateStorage(projectId, request));
    });
  }

  return (
    <form className="console-panel" aria-label="Storage rules playground" onSubmit={run}>
      <h2>Playground</h2>
      <div className="console-row">
        <label>
          Method{' '}
          <select aria-label="Method" value={method} onChange={(event) => setMethod(event.target.value as Method)}>
            {(['get', 'list', 'create', 'update', 'delete'] as const).map((name) => (
              <option key={name}>{name}</option>
            ))}
          </select>
        </label>
        <label>
          Bucket <input aria-label="Bucket" value={bucket} onChange={(event) => setBucket(event.target.value)} />
        </label>
        <label>
          {method === 'list' ? 'Folder' : 'Object'} <input aria-label="Object path" value={path} onChange={(event) => setPath(event.target.value)} placeholder={method === 'list' ? 'users/alice/' : 'users/alice/photo'} />
        </label>
      </div>
      <fieldset className="console-row">
        <legend>Caller</legend>
        <label>
          <input type="radio" name="storage-caller" checked={!signedIn} onChange={() => setSignedIn(false)} /> Anonymous (not signed in)
        </label>
        <label>
          <input type="radio" name="storage-caller" checked={signedIn} onChange={() => setSignedIn(true)} /> Signed-in user
        </label>
        {signedIn && (
          <>
            <label>
              UID <input aria-label="UID" value={uid} onChange={(event) => setUid(event.target.value)} />
            </label>
            <label>
              Claims (JSON) <input aria-label="Claims" value={claims} onChange={(event) => setClaims(event.target.value)} />
            </label>
          </>
        )}
      </fieldset>
      {writes && (
        <fieldset className="console-row">
          <legend>The upload (request.resource)</legend>
          <label>
            Size in bytes <input aria-label="Size in bytes" inputMode="numeric" value={size} onChange={(event) => setSize(event.target.value)} />
          </label>
          <label>
            Content type <input aria-label="Content type" value={contentType} onChange={(event) => setContentType(event.target.value)} />
          </label>
          <label>
            Custom metadata (JSON) <input aria-label="Custom metadata" value={metadata} placeholder='{"owner": "alice"}' onChange={(event) => setMetadata(event.target.value)} />
          </label>
        </fieldset>
      )}
      <p className="console-muted">The stored object, when there is one, is <code>resource</code>.</p>
      <button type="submit" disabled={action.busy}>
        Simulate
      </button>
      <ErrorNote error={action.error} />
      {answer && <Verdict answer={answer} source={source} />}
    </form>
  );
}
