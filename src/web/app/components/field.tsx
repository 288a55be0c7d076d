/**
 * One labelled text field of a form: the label points at the control (`for`), the hint and the
 * error are its description (`aria-describedby`), and an error marks it `aria-invalid` and is read
 * out as it appears. Every form of the pages writes its text fields with this, so they look,
 * behave and read the same.
 */
import type { ComponentChildren, InputHTMLAttributes, Ref } from 'preact';

/** What the forms ask of a text control, passed on as is. */
interface ControlAttributes {
  /** A one-line input's type; default text. */
  type?: 'text' | 'email' | 'number' | 'password' | 'search' | 'tel' | 'url';
  /** A number input's step. */
  step?: number | 'any';
  required?: boolean;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  placeholder?: string;
  autoComplete?: string;
  inputMode?: 'decimal' | 'email' | 'numeric' | 'search' | 'tel' | 'text' | 'url';
}

export interface FieldProps extends ControlAttributes {
  /** The control's id; the hint and the error take `<id>-hint` and `<id>-error`. */
  id: string;
  label: ComponentChildren;
  value: string;
  /** Gets the new text on every keystroke. */
  onValue: (value: string) => void;
  /** What to type, shown under the control. */
  hint?: ComponentChildren;
  /** Why the value is wrong, shown (and announced) while it is; absent, false or empty: none. */
  error?: ComponentChildren;
  /** A text area of this many rows instead of a one-line input. */
  rows?: number;
  /** Classes of the control. */
  class?: string;
  /** The one-line input itself (e.g. to focus it). */
  controlRef?: Ref<HTMLInputElement>;
}

export function Field({ id, label, value, onValue, hint, error, rows, class: className, controlRef, ...control }: FieldProps) {
  const hasHint = hint !== undefined && hint !== null && hint !== false && hint !== '';
  const hasError = error !== undefined && error !== null && error !== false && error !== '';
  const describedBy = [hasHint && `${id}-hint`, hasError && `${id}-error`].filter(Boolean).join(' ') || undefined;
  const shared = {
    id,
    class: className,
    value,
    'aria-describedby': describedBy,
    'aria-invalid': hasError ? true : undefined,
  };
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {rows === undefined ? (
        // Preact types an input's attributes per `type` (a union); ours are valid for every text type.
        <input
          {...(control as InputHTMLAttributes<HTMLInputElement>)}
          {...shared}
          ref={controlRef}
          onInput={(e) => onValue(e.currentTarget.value)}
        />
      ) : (
        <textarea {...control} {...shared} rows={rows} onInput={(e) => onValue(e.currentTarget.value)} />
      )}
      {hasHint && (
        <span id={`${id}-hint`} class="hint">
          {hint}
        </span>
      )}
      {hasError && (
        <span id={`${id}-error`} class="hint field-error" role="alert">
          {error}
        </span>
      )}
    </div>
  );
}
