/** A JSON text area that says, as you type, whether the text is a JSON object (or empty). */
export type JsonRead = { ok: true; value: Record<string, unknown> | null } | { ok: false; problem: string };

export function readJson(text: string): JsonRead {
  if (!text.trim()) return { ok: true, value: null };
  try {
    const value = JSON.parse(text) as unknown;
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      return { ok: false, problem: 'A schema is a JSON object, like {"type": "object"}.' };
    return { ok: true, value: value as Record<string, unknown> };
  } catch (error) {
    return { ok: false, problem: `Not valid JSON: ${(error as Error).message}` };
  }
}

export function JsonEditor({ id, label, value, onInput }: { id: string; label: string; value: string; onInput: (text: string) => void }) {
  const read = readJson(value);
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <textarea
        id={id}
        class="mono"
        rows={7}
        spellcheck={false}
        value={value}
        aria-invalid={!read.ok}
        aria-describedby={`${id}-hint`}
        onInput={(e) => onInput((e.target as HTMLTextAreaElement).value)}
      />
      <span id={`${id}-hint`} class={read.ok ? 'hint' : 'hint field-error'} role={read.ok ? undefined : 'alert'}>
        {read.ok ? (read.value ? 'Valid JSON.' : 'Empty: no schema.') : read.problem}
      </span>
    </div>
  );
}
