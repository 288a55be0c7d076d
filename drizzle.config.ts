import { defineConfig } from 'drizzle-kit';

// Used by `npm run db:generate` only; the app applies the generated SQL itself (src/db/migrate.ts).
export default defineConfig({
  dialect: 'postgresql',
  schema: './src/db/schema/index.ts',
  out: './drizzle',
});
