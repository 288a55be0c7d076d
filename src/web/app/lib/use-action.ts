/** A write from a view: busy while it runs, its ApiError kept for the view to show. */
import { useState } from 'preact/hooks';
import { asApiError, type ApiError } from './api';

export function useAction(): {
  busy: boolean;
  error: ApiError | undefined;
  run: <T>(work: () => Promise<T>) => Promise<T | undefined>;
  clear: () => void;
} {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | undefined>();
  const run = async <T>(work: () => Promise<T>) => {
    setBusy(true);
    setError(undefined);
    try {
      return await work();
    } catch (e) {
      setError(asApiError(e));
      return undefined;
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, run, clear: () => setError(undefined) };
}
