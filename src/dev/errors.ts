/** A failure of `market dev` that is the user's to fix (busy port, locked directory, missing anvil): one line, exit 1. */
export class DevError extends Error {
  override readonly name = 'DevError';
}
