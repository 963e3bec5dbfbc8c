import { useState, type FormEvent } from 'react';
import { useConsole } from '../ConsoleApp';
import { ErrorNote, useAction } from '../ui';
import { fromJson } from '../data/values';
import { simulate, type SimulateAnswer, type SimulateRequest } from './rules-api';
import { Verdict } from './Verdict';

type Method = SimulateRequest['method'];

function parseObject(text: string, what: string): Record<string, unknown> | undefined {
  if (!text.trim()) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new Error(`${what} is not valid JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error(`${what} must be a JSON object.`);
  return value as Record<string, unknown>;
}

/** Plain JSON document data as Firestore fields (`{"a": 1}` -> `{"a": {"integerValue": "1"}}`). */
function toFields(data: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(data).map(([key, value]) => [key, fromJson(value)]));
}

/**
 * A list's constraints as the operator writes them — `{"where": [["owner", "==", "alice"]],
 * "orderBy": [["createdAt", "desc"]], "limit": 10}` with plain JSON values — in the simulator's shape.
 */
export function parseListQuery(text: string): SimulateRequest['query'] | undefined {
  const raw = parseObject(text, 'Query constraints');
  if (!raw) return undefined;
  const pairs = (value: unknown, what: string): unknown[][] => {
    if (value === undefined) return [];
    if (!Array.isArray(value) || value.some((item) => !Array.isArray(item))) throw new Error(`${what} must be a list of lists, like [["owner", "==", "alice"]].`);
    return value as unknown[][];
  };
  const where = pairs(raw.where, 'where').map(([fieldPath, op, value]) => {
    if (typeof fieldPath !== 'string' || typeof op !== 'string') throw new Error('Each where entry is [field, operator, value], like ["owner", "==", "alice"].');
    return { fieldPath, op, value: fromJson(value) };
  });
  const orderBy = pairs(raw.orderBy, 'orderBy').map(([fieldPath, direction]) => {
    if (typeof fieldPath !== 'string' || (direction !== undefined && direction !== 'asc' && direction !== 'desc')) throw new Error('Each orderBy entry is [field] or [field, "asc" | "desc"].');
    return { fieldPath, ...(direction ? { direction } : {}) };
  });
  if (raw.limit !== undefined && (typeof raw.limit !== 'number' || !Number.isInteger(raw.limit) || raw.limit < 1)) throw new Error('limit must be a whole number above 0.');
  return { ...(where.length ? { where } : {}), ...(orderBy.length ? { orderBy } : {}), ...(typeof raw.limit === 'number' ? { limit: raw.limit } : {}) };
}

/** Simulates one request against the text in the editor (saved or not) and shows what decided it. */
export function Playground({ source }: { source: string }) {
  const { projectId } = useConsole();
  const [method, setMethod] = useState<Method>('get');
  const [path, setPath] = useState('notes/n1');
  const [signedIn, setSignedIn] = useState(false);
  const [uid, setUid] = useState('alice');
  const [claims, setClaims] = useState('{}');
  const [data, setData] = useState('{}');
  const [existing, setExisting] = useState('');
  const [constraints, setConstraints] = useState('{"where": [], "limit": 10}');
  const [answer, setAnswer] = useState<SimulateAnswer | null>(null);
  const action = useAction();
  const writes = method === 'create' || method === 'update';

  function run(event: FormEvent) {
    event.preventDefault();
    setAnswer(null);
    void action.run(async () => {
      const token = parseObject(claims, 'Claims') ?? {};
      const incoming = writes ? parseObject(data, 'Incoming data') : undefined;
      const stored = parseObject(existing, 'Stored document');
      const listQuery = method === 'list' ? parseListQuery(constraints) : undefined;
      const request: SimulateRequest = {
        source,
        method,
        path: path.replace(/^\/+/, ''),
        auth: signedIn ? { uid, token } : null,
        ...(incoming ? { data: toFields(incoming) } : {}),
        ...(stored ? { existing: toFields(stored) } : {}),
        ...(listQuery ? { query: listQuery } : {}),
      };
      setAnswer(await simulate(projectId, '(default)', request));
    });
  }

  return (
    <form className="console-panel" aria-label="Rules playground" onSubmit={run}>
      <h2>Playground</h2>
      <div className="console-row">
        <label>
          Method{' '}
          <select value={method} onChange={(event) => setMethod(event.target.value as Method)}>
            {(['get', 'list', 'create', 'update', 'delete'] as const).map((name) => (
              <option key={name}>{name}</option>
            ))}
          </select>
        </label>
        <label>
          Path <input aria-label="Path" value={path} onChange={(event) => setPath(event.target.value)} placeholder={method === 'list' ? 'notes' : 'notes/n1'} />
        </label>
      </div>
      {method === 'list' && (
        <label className="console-block">
          Query constraints (JSON: where [field, op, value], orderBy [field, asc|desc], limit)
          <textarea aria-label="Query constraints" rows={2} spellCheck={false} value={constraints} onChange={(event) => setConstraints(event.target.value)} />
        </label>
      )}
      <fieldset className="console-row">
        <legend>Caller</legend>
        <label>
          <input type="radio" name="caller" checked={!signedIn} onChange={() => setSignedIn(false)} /> Anonymous (not signed in)
        </label>
        <label>
          <input type="radio" name="caller" checked={signedIn} onChange={() => setSignedIn(true)} /> Signed-in user
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
        <label className="console-block">
          Incoming data (JSON; a timestamp as <code>{'{"timestampValue": "2025-01-01T00:00:00Z"}'}</code>)
          <textarea aria-label="Incoming data" rows={3} value={data} onChange={(event) => setData(event.target.value)} />
        </label>
      )}
      <label className="console-block">
        Stored document (JSON; empty: as stored)
        <textarea aria-label="Stored document" rows={2} value={existing} onChange={(event) => setExisting(event.target.value)} />
      </label>
      <button type="submit" disabled={action.busy}>
        Simulate
      </button>
      <ErrorNote error={action.error} />
      {answer && <Verdict answer={answer} source={source} />}
    </form>
  );
}
