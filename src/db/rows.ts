/** The rows of a raw `db.execute` result from either driver: postgres.js returns an array, PGlite `{ rows }`. */
export function resultRows<T>(result: unknown): T[] {
  return Array.isArray(result) ? (result as T[]) : ((result as { rows?: T[] }).rows ?? []);
}
