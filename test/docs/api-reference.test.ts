/**
 * docs/registry-api.md is what `npm run docs:reference` writes from the registry's served
 * /openapi.json: the committed file is not stale, and it lists every route the document serves, each
 * with its method, its access (agreeing with the document's credentials) and its summary.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { readFileSync } from 'node:fs';
import { REGISTRY_ROUTES, type RouteAccess } from 'skill-market/registry';
import {
  ACCESS,
  expectedSecurity,
  formatted,
  type OpenApiDocument,
  REFERENCE_FILE,
  renderApiReference,
  securityOf,
} from '../../scripts/api-reference';
import type { DatabaseHandle } from '../../src/db';
import { openTestDatabase } from '../support/database';
import { testRegistry } from '../support/registry';

let database: DatabaseHandle;
let served: OpenApiDocument;
beforeAll(async () => {
  database = await openTestDatabase('embedded');
  served = (await (await testRegistry(database).request('/openapi.json')).json()) as OpenApiDocument;
}, 60_000);
afterAll(() => database.close());

const committed = () => readFileSync(REFERENCE_FILE, 'utf8');

describe('the registry API reference (docs/registry-api.md)', () => {
  it('is what the generator writes from the served /openapi.json (else: npm run docs:reference)', () => {
    expect(committed()).toBe(formatted(renderApiReference(served)));
  });

  it('lists every served route once, with its method, access and summary', () => {
    const rows = new Map(
      [...committed().matchAll(/^\| `([A-Z]+ \S+)` +\| ([a-z-]+) +\| (.*?) +\| /gm)].map((m) => [m[1]!, { access: m[2]!, summary: m[3]! }]),
    );
    const operations = Object.entries(served.paths).flatMap(([path, ops]) =>
      Object.entries(ops).map(([method, op]) => ({ key: `${method.toUpperCase()} ${path.replace(/\{([^}]+)\}/g, ':$1')}`, op })),
    );
    expect(operations.length).toBeGreaterThan(50);
    expect([...rows.keys()].sort()).toEqual(operations.map((o) => o.key).sort());
    for (const { key, op } of operations) {
      const row = rows.get(key)!;
      expect({
        key,
        summary: row.summary.replace(/\\\|/g, '|').replace(/ \(served for the web pages, not in the route table\)$/, ''),
      }).toEqual({
        key,
        summary: op.summary!,
      });
      // The access written is the route table's, and it asks for the credentials the document shows.
      expect({ key, security: expectedSecurity(row.access as RouteAccess) }).toEqual({ key, security: securityOf(op) });
      expect(Object.keys(ACCESS)).toContain(row.access);
    }
  });

  it('takes each route’s access from the route table', () => {
    for (const route of Object.values(REGISTRY_ROUTES)) {
      expect(committed()).toMatch(
        new RegExp(`^\\| \`${route.method} ${route.path.replace(/[.]/g, '\\.')}\` +\\| ${route.access} +\\| `, 'm'),
      );
    }
  });

  it('refuses to render a route table that disagrees with the served credentials', () => {
    const routes = { ...REGISTRY_ROUTES, health: { ...REGISTRY_ROUTES.health, access: 'creator' as const } };
    expect(() => renderApiReference(served, routes)).toThrow('GET /health: the route table says creator, the served document none');
  });
});
