/**
 * Throwaway PostgreSQL databases of one bench run, on the server of BENCH_DATABASE_URL (default the
 * local one, trust auth), dropped when the run ends.
 *
 * @example
 * const databases = benchDatabases('market_bench_pay');
 * try { await startOurStack(chain, await databases.create(), …) } finally { await databases.dropAll() }
 */
import postgres from 'postgres';

const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** `create()` makes a fresh database named `<prefix>_<time>_<n>` and answers its URL; `dropAll()` drops them all and disconnects. */
export function benchDatabases(prefix: string) {
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  const names: string[] = [];
  return {
    async create(): Promise<string> {
      const name = `${prefix}_${Date.now().toString(36)}_${names.length}`;
      await admin.unsafe(`create database ${name}`);
      names.push(name);
      const url = new URL(ADMIN_URL);
      url.pathname = `/${name}`;
      return url.toString();
    },
    async dropAll(): Promise<void> {
      for (const name of names) await admin.unsafe(`drop database if exists ${name} with (force)`).catch(() => {});
      await admin.end();
    },
  };
}
