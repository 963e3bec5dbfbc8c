import { useEffect, useState, type ChangeEvent, type FormEvent } from 'react';
import { useSearchParams } from 'react-router';
import { useConsole } from '../ConsoleApp';
import { Empty, ErrorNote, Loading, formatTime, useAction, useLoad } from '../ui';
import { defaultBucketOf, deleteFile, downloadFile, listFolder, readableBytes, uploadFile, type FolderPage } from './files-api';
import { ObjectPanel } from './ObjectPanel';
import './files.css';

/**
 * Cloud Storage in the console: a bucket's folders (name prefixes up to a `/`) and objects, browsed
 * by folder; upload into the folder shown, download, delete, and an object's metadata and download
 * URLs in a panel. The bucket and folder are in the address, so a reload or a shared link keeps them.
 */
export function FilesPage() {
  const { projectId } = useConsole();
  const [params, setParams] = useSearchParams();
  const bucket = params.get('bucket') || defaultBucketOf(projectId);
  const prefix = params.get('prefix') ?? '';
  const selected = params.get('object');
  const [pages, setPages] = useState<FolderPage[]>([]);
  const [bucketDraft, setBucketDraft] = useState(bucket);
  useEffect(() => setBucketDraft(bucket), [bucket]);
  const [goTo, setGoTo] = useState('');
  const [notice, setNotice] = useState<string | null>(null);
  const key = `${bucket}|${prefix}`;
  const first = useLoad(async () => {
    setPages([]);
    return listFolder(bucket, prefix);
  }, key);
  const more = useAction();
  const change = useAction();
  const shown = first.data ? [first.data, ...pages] : [];
  const folders = shown.flatMap((page) => page.folders);
  const files = shown.flatMap((page) => page.files);
  const nextPageToken = shown.at(-1)?.nextPageToken;

  const navigate = (next: { bucket?: string; prefix?: string; object?: string | null }) => {
    setNotice(null);
    setParams((current) => {
      const updated = new URLSearchParams(current);
      if (next.bucket !== undefined) updated.set('bucket', next.bucket);
      if (next.prefix !== undefined) updated.set('prefix', next.prefix);
      if (next.object === null || next.prefix !== undefined || next.bucket !== undefined) updated.delete('object');
      if (next.object) updated.set('object', next.object);
      return updated;
    });
  };

  const upload = (event: ChangeEvent<HTMLInputElement>) => {
    const chosen = [...(event.currentTarget.files ?? [])];
    event.currentTarget.value = '';
    if (!chosen.length) return;
    void change.run(async () => {
      for (const [index, file] of chosen.entries()) {
        setNotice(`Uploading ${file.name} (${index + 1} of ${chosen.length})…`);
        await uploadFile(bucket, prefix, file);
      }
      setNotice(chosen.length === 1 ? `Uploaded ${chosen[0]!.name}.` : `Uploaded ${chosen.length} files.`);
      first.reload();
    });
  };

  const remove = (name: string) => {
    if (!window.confirm(`Delete ${name}? This cannot be undone.`)) return;
    void change.run(async () => {
      await deleteFile(bucket, name);
      if (selected === name) navigate({ object: null });
      setNotice(`Deleted ${name}.`);
      first.reload();
    });
  };

  const crumbs = prefix.split('/').filter(Boolean);
  return (
    <section>
      <h1>Files</h1>
      <form
        className="console-row"
        onSubmit={(event: FormEvent) => {
          event.preventDefault();
          if (bucketDraft.trim()) navigate({ bucket: bucketDraft.trim(), prefix: '' });
        }}
      >
        <label>
          Bucket <input aria-label="Bucket" size={32} value={bucketDraft} onChange={(event) => setBucketDraft(event.target.value)} />
        </label>
        <button type="submit">Open bucket</button>
      </form>
      <nav aria-label="Folder" className="console-breadcrumbs">
        <button type="button" className="console-link" onClick={() => navigate({ prefix: '' })}>
          {bucket}
        </button>
        {crumbs.map((crumb, index) => (
          <span key={index}>
            {' / '}
            <button type="button" className="console-link" onClick={() => navigate({ prefix: `${crumbs.slice(0, index + 1).join('/')}/` })}>
              {crumb}
            </button>
          </span>
        ))}
      </nav>
      <div className="console-row">
        <label className="console-file-button" aria-disabled={change.busy}>
          Upload files
          <input type="file" multiple className="console-visually-hidden" disabled={change.busy} onChange={upload} aria-label="Upload files" />
        </label>
        <form
          className="console-row"
          onSubmit={(event: FormEvent) => {
            event.preventDefault();
            const folder = goTo.trim().replace(/^\/+/, '').replace(/\/*$/, '/');
            setGoTo('');
            navigate({ prefix: folder === '/' ? '' : folder });
          }}
        >
          <input aria-label="Folder to open" placeholder="users/alice/" value={goTo} onChange={(event) => setGoTo(event.target.value)} />
          <button type="submit" disabled={!goTo.trim()}>
            Open folder
          </button>
        </form>
      </div>
      <p className="console-muted">Uploads go into the folder shown. A folder exists while something is in it; open a new one by name to upload into it.</p>
      {notice && (
        <p role="status" className="console-muted">
          {notice}
        </p>
      )}
      <ErrorNote error={change.error} />
      {first.loading && <Loading what="the folder" />}
      <ErrorNote error={first.error} />
      {first.data && !first.loading && folders.length === 0 && files.length === 0 && <Empty>Nothing in this folder yet. Upload files above.</Empty>}
      {(folders.length > 0 || files.length > 0) && (
        <div className="console-scroll">
          <table className="console-table" data-testid="files-table">
            <thead>
              <tr>
                <th>Name</th>
                <th>Size</th>
                <th>Type</th>
                <th>Updated</th>
                <th>
                  <span className="console-visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {folders.map((folder) => (
                <tr key={folder} data-testid="files-folder">
                  <td colSpan={5}>
                    <button type="button" className="console-link" onClick={() => navigate({ prefix: folder })}>
                      {folder.slice(prefix.length)}
                    </button>
                  </td>
                </tr>
              ))}
              {files.map((file) => (
                <tr key={file.name} data-testid="files-object" aria-selected={selected === file.name}>
                  <td>
                    <button type="button" className="console-link" onClick={() => navigate({ object: file.name })}>
                      {file.name.slice(prefix.length)}
                    </button>
                  </td>
                  <td>{readableBytes(file.size)}</td>
                  <td>{file.contentType ?? 'application/octet-stream'}</td>
                  <td>{formatTime(Date.parse(file.updated))}</td>
                  <td className="console-actions">
                    <button type="button" onClick={() => void change.run(() => downloadFile(bucket, file.name))} aria-label={`Download ${file.name}`}>
                      Download
                    </button>
                    <button type="button" className="console-danger" onClick={() => remove(file.name)} aria-label={`Delete ${file.name}`}>
                      Delete
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {nextPageToken && (
        <button type="button" disabled={more.busy} onClick={() => void more.run(async () => setPages([...pages, await listFolder(bucket, prefix, nextPageToken)]))}>
          Load more
        </button>
      )}
      <ErrorNote error={more.error} />
      {selected && <ObjectPanel key={`${bucket}|${selected}`} bucket={bucket} name={selected} onChanged={first.reload} onClose={() => navigate({ object: null })} />}
    </section>
  );
}
