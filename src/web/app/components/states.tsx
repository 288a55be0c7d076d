/** Loading, empty and error states every view uses, so they look and read the same everywhere. */
import type { ComponentChildren } from 'preact';
import type { ApiError } from '../lib/api';

/** Grey blocks in the shape of what is coming, so nothing jumps when it arrives. */
export function Skeleton({ lines = 3, label = 'Loading' }: { lines?: number; label?: string }) {
  return (
    <div class="skeleton" role="status" aria-live="polite" aria-label={label}>
      {Array.from({ length: lines }, (_, i) => (
        <span key={i} class="skeleton-line" style={{ width: `${90 - ((i * 17) % 40)}%` }} />
      ))}
    </div>
  );
}

export function ErrorBox({ error, retry, title = 'Something went wrong' }: { error: ApiError; retry?: () => void; title?: string }) {
  return (
    <div class="notice notice-error" role="alert">
      <strong>{title}</strong>
      <p class="error-message">{error.message}</p>
      {error.requestId && (
        <p class="muted small">
          Request id: <code class="request-id">{error.requestId}</code> (quote it when you report the problem)
        </p>
      )}
      {retry && (
        <button type="button" class="button" onClick={retry}>
          Try again
        </button>
      )}
    </div>
  );
}

export function Empty({ title, children }: { title: string; children?: ComponentChildren }) {
  return (
    <div class="notice notice-empty" role="status">
      <strong>{title}</strong>
      {children && <div class="muted">{children}</div>}
    </div>
  );
}
