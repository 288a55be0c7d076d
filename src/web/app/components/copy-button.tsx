import { useState } from 'preact/hooks';

/** Copies `text`; says so for a moment (also to screen readers). */
export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [done, setDone] = useState<'copied' | 'failed' | undefined>();
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setDone('copied');
    } catch {
      setDone('failed');
    }
    setTimeout(() => setDone(undefined), 2000);
  };
  return (
    <button type="button" class="button button-small" onClick={copy} aria-live="polite">
      {done === 'copied' ? 'Copied' : done === 'failed' ? 'Copy failed' : label}
    </button>
  );
}

/** A block of code with a copy button. */
export function CodeBlock({ code, label }: { code: string; label: string }) {
  return (
    <figure class="code-block">
      <figcaption>
        <span>{label}</span>
        <CopyButton text={code} label={`Copy ${label}`} />
      </figcaption>
      <pre tabIndex={0}>
        <code>{code}</code>
      </pre>
    </figure>
  );
}
