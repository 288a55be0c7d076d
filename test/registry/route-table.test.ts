/**
 * The route table is the registry's one list of routes: every route the registry serves (all but
 * the web pages' own: the hidden page and reference routes, and the settings the pages read) is in
 * REGISTRY_ROUTES and every entry is served, each with the table's schemas, summary, tag and
 * access, so a route cannot be added in one place only.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { needsCredential, REGISTRY_ROUTES, type Route } from 'skill-market/registry';
import type { DatabaseHandle } from '../../src/db';
import { openTestDatabase } from '../support/database';
import { testRegistry } from '../support/registry';

interface Served {
  method: string;
  path: string;
  hooks: { params?: unknown; query?: unknown; body?: unknown; response?: unknown; detail?: Record<string, unknown> };
}

/** The pages' settings: served beside the API for the pages alone, not part of the registry's API. */
const PAGE_ROUTES = ['GET /web/config'];

let database: DatabaseHandle;
let served: Served[];
beforeAll(async () => {
  database = await openTestDatabase('embedded');
  const { app } = testRegistry(database);
  served = (app.routes as unknown as Served[]).filter((route) => route.hooks.detail?.hide !== true && !PAGE_ROUTES.includes(key(route)));
});
afterAll(() => database.close());

const key = (route: { method: string; path: string }) => `${route.method} ${route.path}`;
const table = Object.entries(REGISTRY_ROUTES) as [string, Route][];
/** A schema as JSON: a refinement's own error function (a server-side message) is not part of the shape. */
const shape = (schema: unknown) => (schema === undefined ? undefined : JSON.parse(JSON.stringify(schema)));

describe('the route table', () => {
  it('lists every route the registry serves, and the registry serves every route it lists', () => {
    expect(served.length).toBeGreaterThan(0);
    expect(served.map(key).sort()).toEqual(table.map(([, route]) => key(route)).sort());
  });

  it('names each route once', () => {
    const keys = table.map(([, route]) => key(route));
    expect(keys.filter((k, i) => keys.indexOf(k) !== i)).toEqual([]);
  });

  it('gives each served route its schemas, tag and summary', () => {
    const byKey = new Map(served.map((route) => [key(route), route]));
    for (const [name, route] of table) {
      const hooks = byKey.get(key(route))?.hooks;
      expect({ name, ...(hooks ? pick(hooks) : {}) }).toEqual({
        name,
        params: shape(route.params),
        query: shape(route.query),
        body: shape(route.body),
        response: shape(route.response),
        tags: [route.tag],
        summary: route.summary,
      });
    }
  });

  it('documents the credentials its access level asks for', () => {
    const byKey = new Map(served.map((route) => [key(route), route]));
    for (const [name, route] of table) {
      const security = byKey.get(key(route))?.hooks.detail?.security;
      const expected = needsCredential(route.access)
        ? [{ bearer: [] }, { cookie: [] }]
        : route.access === 'consumer-or-payment'
          ? [{}, { bearer: [] }, { cookie: [] }]
          : undefined;
      expect({ name, access: route.access, security }).toEqual({ name, access: route.access, security: expected });
    }
  });
});

function pick(hooks: Served['hooks']) {
  return {
    params: shape(hooks.params),
    query: shape(hooks.query),
    body: shape(hooks.body),
    response: shape(hooks.response),
    tags: hooks.detail?.tags,
    summary: hooks.detail?.summary,
  };
}
