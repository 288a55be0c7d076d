/**
 * A modal dialog on the native <dialog>: the browser traps focus inside and Escape closes it;
 * focus moves to the first control on open and back to what opened it on close.
 */
import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';

export function Dialog({ title, onClose, children }: { title: string; onClose: () => void; children: ComponentChildren }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    const opener = document.activeElement as HTMLElement | null;
    dialog.showModal();
    dialog.querySelector<HTMLElement>('[autofocus], input, textarea, select, button:not(.dialog-close)')?.focus();
    return () => {
      if (dialog.open) dialog.close();
      // Back where the user was (the button that opened it), if it is still on the page.
      if (opener?.isConnected) opener.focus();
    };
  }, []);
  return (
    <dialog
      ref={ref}
      class="dialog"
      aria-labelledby="dialog-title"
      onCancel={(event) => {
        // Escape: let the owner unmount us, so state and focus stay in one place.
        event.preventDefault();
        onClose();
      }}
    >
      <div class="dialog-head">
        <h2 id="dialog-title">{title}</h2>
        <button type="button" class="button button-small dialog-close" onClick={onClose} aria-label="Close">
          ✕
        </button>
      </div>
      {children}
    </dialog>
  );
}

/** "Are you sure?" for destructive actions; the action's error stays in the dialog. */
export function ConfirmDialog({
  title,
  children,
  action,
  onConfirm,
  onClose,
  busy,
}: {
  title: string;
  children: ComponentChildren;
  action: string;
  onConfirm: () => void;
  onClose: () => void;
  busy: boolean;
}) {
  return (
    <Dialog title={title} onClose={onClose}>
      {children}
      <div class="row dialog-actions">
        <button type="button" class="button" onClick={onClose} autofocus>
          Cancel
        </button>
        <button type="button" class="button button-danger" onClick={onConfirm} disabled={busy}>
          {busy ? 'Working…' : action}
        </button>
      </div>
    </Dialog>
  );
}
