/**
 * A form generated from a skill's input schema: one labelled control per top-level field
 * (text, number, checkbox, choice; JSON for nested values), or one JSON box when the schema has
 * no fields. The skill server validates the input again before asking for payment.
 */
import { useState } from 'preact/hooks';
import { exampleOf, fieldsOf, type Field as SchemaField, type JsonSchema } from '../lib/schema';
import { Field } from './field';

export type FormResult = { ok: true; value: unknown } | { ok: false; problem: string };

/** What a control starts with: the schema's default, a required choice's first option, else empty. */
function initial(field: SchemaField): string {
  const preset = field.schema.default;
  if (field.type === 'boolean') return String(preset === true);
  if (preset !== undefined) return typeof preset === 'string' ? preset : JSON.stringify(preset);
  if (field.enum) return field.required && field.enum.length > 0 ? String(field.enum[0]) : '';
  if (field.type === 'string' || field.type === 'number' || field.type === 'integer') return '';
  return JSON.stringify(exampleOf(field.schema));
}

function convert(field: SchemaField, raw: string): { ok: true; value: unknown; skip?: boolean } | { ok: false; problem: string } {
  if (raw === '' && field.type !== 'boolean')
    return field.required ? { ok: false, problem: `${field.name} is required` } : { ok: true, value: undefined, skip: true };
  if (field.enum) return { ok: true, value: field.enum.find((v) => String(v) === raw) ?? raw };
  switch (field.type) {
    case 'string':
      return { ok: true, value: raw };
    case 'number':
    case 'integer': {
      const n = Number(raw);
      if (!Number.isFinite(n) || (field.type === 'integer' && !Number.isInteger(n)))
        return { ok: false, problem: `${field.name} must be ${field.type === 'integer' ? 'a whole number' : 'a number'}` };
      return { ok: true, value: n };
    }
    case 'boolean':
      return { ok: true, value: raw === 'true' };
    default:
      try {
        return { ok: true, value: JSON.parse(raw) };
      } catch {
        return { ok: false, problem: `${field.name} must be valid JSON` };
      }
  }
}

export function useSchemaForm(schema: JsonSchema | null) {
  const fields = fieldsOf(schema);
  const [values, setValues] = useState<Record<string, string>>(() => Object.fromEntries((fields ?? []).map((f) => [f.name, initial(f)])));
  const [json, setJson] = useState(() => JSON.stringify(exampleOf(schema), null, 2));
  const read = (): FormResult => {
    if (!fields) {
      try {
        return { ok: true, value: JSON.parse(json) };
      } catch {
        return { ok: false, problem: 'The input must be valid JSON' };
      }
    }
    const out: Record<string, unknown> = {};
    for (const f of fields) {
      const converted = convert(f, values[f.name] ?? '');
      if (!converted.ok) return converted;
      if (!converted.skip) out[f.name] = converted.value;
    }
    return { ok: true, value: out };
  };
  const controls = fields ? (
    fields.map((f) => {
      const id = `input-${f.name}`;
      const set = (v: string) => setValues({ ...values, [f.name]: v });
      const value = values[f.name] ?? '';
      const hint = f.description ? (
        <span class="hint" id={`${id}-hint`}>
          {f.description}
        </span>
      ) : null;
      const described = f.description ? `${id}-hint` : undefined;
      if (f.type === 'boolean') {
        return (
          <div class="field field-check" key={f.name}>
            <input
              id={id}
              type="checkbox"
              checked={value === 'true'}
              onChange={(e) => set(String(e.currentTarget.checked))}
              aria-describedby={described}
            />
            <label for={id}>{f.name}</label>
            {hint}
          </div>
        );
      }
      const labelText = (
        <>
          {f.name} {f.required ? <span class="badge">required</span> : <span class="muted small">optional</span>}
        </>
      );
      const label = <label for={id}>{labelText}</label>;
      if (f.enum) {
        return (
          <div class="field" key={f.name}>
            {label}
            <select id={id} value={value} onChange={(e) => set(e.currentTarget.value)} aria-describedby={described}>
              {!f.required && <option value="">—</option>}
              {f.enum.map((v) => (
                <option key={String(v)} value={String(v)}>
                  {String(v)}
                </option>
              ))}
            </select>
            {hint}
          </div>
        );
      }
      // Objects and arrays are typed as JSON; strings without a short maxLength get room to write.
      const structured = f.type !== 'string' && f.type !== 'number' && f.type !== 'integer';
      const longText = f.type === 'string' && (typeof f.schema.maxLength !== 'number' || f.schema.maxLength > 120);
      const common = { id, label: labelText, value, required: f.required, onValue: set, hint: f.description };
      if (structured || longText)
        return <Field key={f.name} {...common} rows={structured ? 4 : 3} placeholder={structured ? 'JSON' : undefined} />;
      if (f.type === 'string') return <Field key={f.name} {...common} />;
      return <Field key={f.name} {...common} type="number" step={f.type === 'integer' ? 1 : 'any'} />;
    })
  ) : (
    <Field id="input-json" label="Input (JSON)" rows={6} class="mono" value={json} onValue={setJson} />
  );
  return { controls, read };
}
