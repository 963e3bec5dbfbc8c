import { useState } from 'react';
import { convert, typeOf, valueTypes, type FirestoreValue, type ValueType } from './values';

/** Edits one value by its type; maps and arrays nest. */
export function ValueEditor({ value, onChange, documentsRoot, label }: { value: FirestoreValue; onChange: (next: FirestoreValue) => void; documentsRoot: string; label: string }) {
  const type = typeOf(value);
  return (
    <div className="console-value" data-type={type}>
      <select aria-label={`${label} type`} value={type} onChange={(event) => onChange(convert(value, event.target.value as ValueType, documentsRoot))}>
        {valueTypes.map((option) => (
          <option key={option} value={option}>
            {option}
          </option>
        ))}
      </select>
      <ValueInput value={value} onChange={onChange} documentsRoot={documentsRoot} label={label} />
    </div>
  );
}

function ValueInput({ value, onChange, documentsRoot, label }: { value: FirestoreValue; onChange: (next: FirestoreValue) => void; documentsRoot: string; label: string }) {
  if ('stringValue' in value) return <textarea aria-label={`${label} value`} rows={1} value={value.stringValue} onChange={(event) => onChange({ stringValue: event.target.value })} />;
  if ('integerValue' in value) return <input aria-label={`${label} value`} inputMode="numeric" value={value.integerValue} onChange={(event) => onChange({ integerValue: event.target.value.trim() })} />;
  if ('doubleValue' in value) return <NumberInput label={`${label} value`} value={value.doubleValue} onChange={(doubleValue) => onChange({ doubleValue })} />;
  if ('booleanValue' in value)
    return (
      <select aria-label={`${label} value`} value={String(value.booleanValue)} onChange={(event) => onChange({ booleanValue: event.target.value === 'true' })}>
        <option value="true">true</option>
        <option value="false">false</option>
      </select>
    );
  if ('timestampValue' in value) return <input aria-label={`${label} value`} value={value.timestampValue} onChange={(event) => onChange({ timestampValue: event.target.value })} placeholder="2026-01-31T12:00:00Z" />;
  if ('geoPointValue' in value)
    return (
      <span className="console-row">
        <NumberInput label={`${label} latitude`} value={value.geoPointValue.latitude ?? 0} onChange={(latitude) => onChange({ geoPointValue: { ...value.geoPointValue, latitude } })} />
        <NumberInput label={`${label} longitude`} value={value.geoPointValue.longitude ?? 0} onChange={(longitude) => onChange({ geoPointValue: { ...value.geoPointValue, longitude } })} />
      </span>
    );
  if ('referenceValue' in value) return <input aria-label={`${label} value`} value={value.referenceValue} onChange={(event) => onChange({ referenceValue: event.target.value.trim() })} />;
  if ('bytesValue' in value) return <input aria-label={`${label} value (base64)`} value={value.bytesValue} onChange={(event) => onChange({ bytesValue: event.target.value.trim() })} />;
  if ('mapValue' in value) return <FieldsEditor fields={value.mapValue.fields ?? {}} onChange={(fields) => onChange({ mapValue: { fields } })} documentsRoot={documentsRoot} label={label} />;
  if ('arrayValue' in value) {
    const values = value.arrayValue.values ?? [];
    return (
      <ol className="console-nested">
        {values.map((item, index) => (
          <li key={index}>
            <ValueEditor value={item} label={`${label}[${index}]`} documentsRoot={documentsRoot} onChange={(next) => onChange({ arrayValue: { values: values.map((old, i) => (i === index ? next : old)) } })} />
            <button type="button" aria-label={`Remove ${label}[${index}]`} onClick={() => onChange({ arrayValue: { values: values.filter((_, i) => i !== index) } })}>
              ✕
            </button>
          </li>
        ))}
        <li>
          <button type="button" onClick={() => onChange({ arrayValue: { values: [...values, { stringValue: '' }] } })}>
            Add item
          </button>
        </li>
      </ol>
    );
  }
  return <span className="console-muted">null</span>;
}

/** A number field that lets the operator type "-" or "1." on the way to a number. */
function NumberInput({ value, onChange, label }: { value: number; onChange: (next: number) => void; label: string }) {
  const [text, setText] = useState(String(value));
  return (
    <input
      aria-label={label}
      inputMode="decimal"
      value={Number(text) === value ? text : String(value)}
      onChange={(event) => {
        setText(event.target.value);
        onChange(event.target.value.trim() === '' ? Number.NaN : Number(event.target.value));
      }}
    />
  );
}

/** The fields of a document or a map: names, typed values, add and remove. */
export function FieldsEditor({ fields, onChange, documentsRoot, label }: { fields: Record<string, FirestoreValue>; onChange: (next: Record<string, FirestoreValue>) => void; documentsRoot: string; label?: string }) {
  const [newName, setNewName] = useState('');
  const names = Object.keys(fields).sort();
  const prefix = label ? `${label}.` : '';
  function add() {
    const name = newName.trim();
    if (!name || name in fields) return;
    onChange({ ...fields, [name]: { stringValue: '' } });
    setNewName('');
  }
  return (
    <ul className="console-fields">
      {names.map((name) => (
        <li key={name}>
          <span className="console-field-name">{name}</span>
          <ValueEditor value={fields[name]!} label={`${prefix}${name}`} documentsRoot={documentsRoot} onChange={(next) => onChange({ ...fields, [name]: next })} />
          <button type="button" aria-label={`Remove field ${prefix}${name}`} onClick={() => { const next = { ...fields }; delete next[name]; onChange(next); }}>
            ✕
          </button>
        </li>
      ))}
      <li className="console-row">
        <input aria-label={`New field name${label ? ` in ${label}` : ''}`} placeholder="field name" value={newName} onChange={(event) => setNewName(event.target.value)} onKeyDown={(event) => { if (event.key === 'Enter') { event.preventDefault(); add(); } }} />
        <button type="button" onClick={add} disabled={!newName.trim() || newName.trim() in fields}>
          Add field
        </button>
      </li>
    </ul>
  );
}
