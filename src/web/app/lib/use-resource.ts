/**
 * Loads data for a view: `{ state: 'loading' | 'ready' | 'error' }`, reloaded when `key` changes,
 * with stale answers dropped (a slow first answer never overwrites a later one).
 */
import { useEffect, useState } from 'preact/hooks';
import { asApiError, type ApiError } from './api';

export type Resource<T> = { state: 'loading' } | { state: 'ready'; data: T } | { state: 'error'; error: ApiError };

export function useResource<T>(load: (signal: AbortSignal) => Promise<T>, key: unknown[]): [Resource<T>, () => void] {
  const [resource, setResource] = useState<Resource<T>>({ state: 'loading' });
  const [attempt, setAttempt] = useState(0);
  useEffect(() => {
    const controller = new AbortController();
    setResource({ state: 'loading' });
    load(controller.signal).then(
      (data) => controller.signal.aborted || setResource({ state: 'ready', data }),
      (error) => controller.signal.aborted || setResource({ state: 'error', error: asApiError(error) }),
    );
    return () => controller.abort();
  }, [...key, attempt]);
  return [resource, () => setAttempt((n) => n + 1)];
}
