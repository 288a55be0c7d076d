import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import type { DatabaseHandle } from '../../src/db';
import { VERSION } from '../../src/version';
import { databaseKinds, openTestDatabase } from '../support/database';
import { testRegistry } from '../support/registry';

for (const kind of databaseKinds) {
  describe(`GET /health on ${kind}`, () => {
    let database: DatabaseHandle;
    beforeAll(async () => {
      database = await openTestDatabase(kind);
    });
    afterAll(() => database.close());

    it('answers ok with the version and the database kind', async () => {
      const res = await testRegistry(database).request('/health');
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ status: 'ok', version: VERSION, database: kind });
    });

    it('answers 503 unavailable when the database does not answer', async () => {
      const broken: DatabaseHandle = { ...database, ping: () => Promise.reject(new Error('connection refused')) };
      const res = await testRegistry(broken).request('/health');
      expect(res.status).toBe(503);
      expect(await res.json()).toEqual({ status: 'unavailable', version: VERSION, database: kind });
    });
  });
}
