import { useState } from 'react';
import { ErrorNote, Loading, formatTime, useAction, useLoad } from '../ui';
import { createDownloadToken, downloadTokensKey, downloadUrl, getFile, readableBytes, revokeDownloadToken, updateFile, type StoredFile } from './files-api';

interface ObjectPanelProps {
  bucket: string;
  name: string;
  /** The listing should be read again (a change of type or size shows there). */
  onChanged: () => void;
  onClose: () => void;
}

/**
 * One object: its metadata (what a write fixed, and what may be changed: content type, caching,
 * disposition, custom metadata) and its download URLs, which open it to whoever holds one; each
 * can be revoked, and new ones made.
 */
export function ObjectPanel({ bucket, name, onChanged, onClose }: ObjectPanelProps) {
  const file = useLoad(() => getFile(bucket, name), `${bucket}|${name}`);
  // Kept here: the details below start afresh from each new version of the object.
  const [notice, setNotice] = useState<string | null>(null);
  return (
    <section className="console-panel console-object" aria-label={`Object ${name}`}>
      <div className="console-row">
        <h2>
          <code>{name}</code>
        </h2>
        <button type="button" onClick={onClose}>
          Close
        </button>
      </div>
      {file.loading && !file.data && <Loading what="the object" />}
      <ErrorNote error={file.error} />
      {file.data && (
        <ObjectDetails
          key={`${file.data.generation}/${file.data.metageneration}`}
          file={file.data}
          onChanged={(message) => {
            setNotice(message);
            file.reload();
            onChanged();
          }}
        />
      )}
      {notice && <p role="status">{notice}</p>}
    </section>
  );
}

function ObjectDetails({ file, onChanged }: { file: StoredFile; onChanged: (notice: string | null) => void }) {
  const tokens = (file.metadata?.[downloadTokensKey] ?? '').split(',').filter(Boolean);
  const custom = Object.entries(file.metadata ?? {}).filter(([key]) => key !== downloadTokensKey);
  const [contentType, setContentType] = useState(file.contentType ?? '');
  const [cacheControl, setCacheControl] = useState(file.cacheControl ?? '');
  const [contentDisposition, setContentDisposition] = useState(file.contentDisposition ?? '');
  const [entries, setEntries] = useState<Array<[string, string]>>(custom.length ? custom : []);
  const saving = useAction();
  const tokenAction = useAction();

  const save = () =>
    void saving.run(async () => {
      const keys = entries.map(([key]) => key.trim());
      if (keys.some((key) => !key)) throw new Error('Every custom metadata entry needs a key.');
      if (keys.includes(downloadTokensKey)) throw new Error(`${downloadTokensKey} is managed under Download URLs.`);
      if (new Set(keys).size !== keys.length) throw new Error('Custom metadata keys must be different.');
      const metadata: Record<string, string | null> = Object.fromEntries(custom.map(([key]) => [key, null]));
      for (const [key, value] of entries) metadata[key.trim()] = value;
      await updateFile(file.bucket, file.name, {
        contentType: contentType.trim() || null,
        cacheControl: cacheControl.trim() || null,
        contentDisposition: contentDisposition.trim() || null,
        metadata,
      });
      onChanged('Saved.');
    });

  const preview = file.contentType?.startsWith('image/') && tokens[0] ? downloadUrl(file.bucket, file.name, tokens[0]) : undefined;
  return (
    <>
      {preview && <img className="console-preview" src={preview} alt={`Preview of ${file.name}`} />}
      <dl className="console-facts" data-testid="object-facts">
        <dt>Size</dt>
        <dd>
          {readableBytes(file.size)} ({file.size} bytes)
        </dd>
        <dt>Created</dt>
        <dd>{formatTime(Date.parse(file.timeCreated))}</dd>
        <dt>Updated</dt>
        <dd>{formatTime(Date.parse(file.updated))}</dd>
        <dt>Generation</dt>
        <dd>
          <code>{file.generation}</code> (metadata version {file.metageneration})
        </dd>
        <dt>MD5</dt>
        <dd>
          <code>{file.md5Hash}</code>
        </dd>
        <dt>CRC32C</dt>
        <dd>
          <code>{file.crc32c}</code>
        </dd>
      </dl>
      <form
        className="console-form"
        aria-label="Metadata"
        onSubmit={(event) => {
          event.preventDefault();
          save();
        }}
      >
        <h3>Metadata</h3>
        <label>
          Content type <input aria-label="Content type" value={contentType} onChange={(event) => setContentType(event.target.value)} />
        </label>
        <label>
          Cache-Control <input aria-label="Cache-Control" value={cacheControl} placeholder="private, max-age=3600" onChange={(event) => setCacheControl(event.target.value)} />
        </label>
        <label>
          Content-Disposition <input aria-label="Content-Disposition" value={contentDisposition} placeholder="inline" onChange={(event) => setContentDisposition(event.target.value)} />
        </label>
        <fieldset>
          <legend>Custom metadata</legend>
          {entries.length === 0 && <p className="console-muted">None.</p>}
          {entries.map(([key, value], index) => (
            <div className="console-row" key={index} data-testid="metadata-entry">
              <input aria-label={`Key ${index + 1}`} value={key} onChange={(event) => setEntries(entries.map((entry, at) => (at === index ? [event.target.value, entry[1]] : entry)))} />
              <input aria-label={`Value ${index + 1}`} value={value} onChange={(event) => setEntries(entries.map((entry, at) => (at === index ? [entry[0], event.target.value] : entry)))} />
              <button type="button" onClick={() => setEntries(entries.filter((_, at) => at !== index))} aria-label={`Remove entry ${index + 1}`}>
                Remove
              </button>
            </div>
          ))}
          <button type="button" onClick={() => setEntries([...entries, ['', '']])}>
            Add entry
          </button>
        </fieldset>
        <button type="submit" disabled={saving.busy}>
          {saving.busy ? 'Saving…' : 'Save metadata'}
        </button>
        <ErrorNote error={saving.error} />
      </form>
      <h3>Download URLs</h3>
      <p className="console-muted">Anyone holding one of these links can download the object, whatever the rules say. Revoke a link to stop it working.</p>
      <ul className="console-list" data-testid="download-urls">
        {tokens.map((token) => (
          <li key={token}>
            <a href={downloadUrl(file.bucket, file.name, token)} target="_blank" rel="noreferrer" className="console-token-link">
              …{token.slice(-8)}
            </a>{' '}
            <button type="button" onClick={() => void navigator.clipboard?.writeText(downloadUrl(file.bucket, file.name, token))}>
              Copy link
            </button>{' '}
            <button
              type="button"
              className="console-danger"
              disabled={tokenAction.busy}
              aria-label={`Revoke link ending ${token.slice(-8)}`}
              onClick={() =>
                void tokenAction.run(async () => {
                  await revokeDownloadToken(file.bucket, file.name, token);
                  onChanged('The link was revoked.');
                })
              }
            >
              Revoke
            </button>
          </li>
        ))}
      </ul>
      {tokens.length === 0 && <p className="console-muted">No download URL yet.</p>}
      <button
        type="button"
        disabled={tokenAction.busy}
        onClick={() =>
          void tokenAction.run(async () => {
            await createDownloadToken(file.bucket, file.name);
            onChanged('A new download URL was made.');
          })
        }
      >
        Create download URL
      </button>
      <ErrorNote error={tokenAction.error} />
    </>
  );
}
