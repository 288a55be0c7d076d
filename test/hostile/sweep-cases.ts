/**
 * Hostile requests generated from an OpenAPI document: for every operation, bad path parameters,
 * query values, bodies (whole and field by field) and headers. Each case says what it must get:
 * for an input that can never be acceptable (NUL, deep nesting, a wrong type, a broken credential
 * on a protected route, …) the refusal itself — its status and its error text, naming the field
 * attacked — or, where routes check in a different order, one of a few such refusals; `no-5xx`
 * when a route may legitimately take the input (a long search text, a huge description without a
 * length limit) — then any answer but a 5xx.
 */
import { REGISTRY_ROUTES } from 'skill-market/registry';
import { deepArray, deepObject } from './support';

/** A refusal: its status and its `error` text (exact, or a pattern). */
export interface Refusal {
  status: number;
  error: string | RegExp;
}
export type Outcome = { refusals: Refusal[] } | 'no-5xx';

const refused = (status: number, error: string | RegExp): Outcome => ({ refusals: [{ status, error }] });
const oneOf = (...refusals: Refusal[]): Outcome => ({ refusals });
const quoted = (name: string) => name.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
/** Schema validation naming `name` (a body field, or with `where` a query or path parameter) as what is wrong. */
const invalid = (name: string, where: 'field' | 'query field' | 'params field' = 'field'): Refusal => ({
  status: 400,
  // A nested field is named by its path below the field: "calls.0.skillId".
  error: new RegExp(`^Invalid request: ${where} "${quoted(name)}([./][^"]*)?": `),
});
const URL_NUL = refused(400, 'Invalid request: the URL must not contain NUL characters');
const NOT_JSON = refused(400, 'Malformed request body: expected valid JSON');
const NOT_OBJECT = refused(400, 'Invalid request: the body must be a JSON object');
const TOO_DEEP = refused(400, 'Malformed request body: JSON nested deeper than 64 levels');
const TOO_LARGE = refused(413, /^Request body too large: the limit is \d+ bytes$/);
const withNul = (name: string) => refused(400, `Invalid request: field "${name}": must not contain NUL characters`);
const withSurrogate = (name: string) =>
  refused(400, `Invalid request: field "${name}": must not contain unpaired UTF-16 surrogates (\\ud800 without its pair)`);
const SIGN_IN: Refusal = { status: 401, error: 'Authentication required' };
const BAD_TOKEN: Refusal = { status: 401, error: 'Invalid token' };
const CROSS_SITE: Refusal = { status: 403, error: 'Cross-site request refused' };
const NOT_FOUND: Refusal = { status: 404, error: /^[A-Z][A-Za-z ]* not found$/ };
/**
 * The operators' routes (`/operator/…`) check who calls before what they name: the sweep's
 * session is no operator's, and its API key is no session.
 */
const NOT_OPERATOR: Refusal = { status: 403, error: 'Only the marketplace’s operators can do this' };
const KEY_NOT_SESSION: Refusal = { status: 403, error: 'This endpoint needs a signed-in session, not an API key' };

export interface HostileCase {
  label: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
  expect: Outcome;
}

type Schema = Record<string, any>;
interface Operation {
  parameters?: { name: string; in: string; schema?: Schema }[];
  requestBody?: { content?: Record<string, { schema?: Schema }> };
  security?: unknown[];
}

/** Credentials a case can carry: a real session, a real creator key, or none. */
export interface Credentials {
  session: string;
  creatorKey: string;
  /** A JWT signed with the registry's own secret whose `sid` is not a UUID. */
  forgedSid: string;
}

/** Plausible values for path parameters, so one hostile change at a time reaches the route. */
export interface Plausible {
  [param: string]: string;
}

const ZERO_ID = '00000000-0000-0000-0000-000000000000';
const HUGE = 'a'.repeat(300_000);
const cursorOf = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** The JSON types a schema admits; undefined when it admits anything. */
function typesOf(schema: Schema | undefined): Set<string> | undefined {
  if (!schema) return undefined;
  if (typeof schema.type === 'string') return new Set([schema.type === 'integer' ? 'number' : schema.type]);
  if (Array.isArray(schema.type)) return new Set(schema.type.map((t: string) => (t === 'integer' ? 'number' : t)));
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(alternatives)) {
    const all = new Set<string>();
    for (const alternative of alternatives) {
      const types = typesOf(alternative);
      if (!types) return undefined;
      for (const t of types) all.add(t);
    }
    return all;
  }
  if ('const' in schema) return new Set([schema.const === null ? 'null' : typeof schema.const]);
  return undefined;
}

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

/** A value that fits the schema's type, to fill the fields a case does not attack. */
export function plausible(schema: Schema | undefined): unknown {
  const first = schema?.anyOf?.[0] ?? schema;
  if (first && 'const' in first) return first.const;
  if (first?.enum) return first.enum[0];
  switch (first?.type) {
    case 'string':
      if (first.format === 'uuid') return ZERO_ID;
      if (first.pattern === '^0x[0-9a-fA-F]{40}$') return `0x${'0'.repeat(40)}`;
      return 'x'.repeat(Math.max(1, first.minLength ?? 1));
    case 'number':
    case 'integer':
      return 1;
    case 'boolean':
      return true;
    case 'array':
      return Array.from({ length: first.minItems ?? 0 }, () => plausible(first.items));
    case 'object':
      return Object.fromEntries((first.required ?? []).map((k: string) => [k, plausible(first.properties?.[k])]));
    default:
      return 'x';
  }
}

/** The routes (`METHOD /openapi/{template}`) a signed-in session alone may call, from the route table: an API key gets 403 there. */
const SESSION_ONLY = new Set(
  Object.values(REGISTRY_ROUTES)
    .filter((r) => r.access === 'account')
    .map((r) => `${r.method} ${r.path.replace(/:(\w+)/g, '{$1}')}`),
);

/** Every hostile case for one operation. */
export function casesFor(method: string, template: string, op: Operation, creds: Credentials, values: Plausible): HostileCase[] {
  const cases: HostileCase[] = [];
  const sessionOnly = SESSION_ONLY.has(`${method} ${template}`);
  const secured = Array.isArray(op.security) && op.security.length > 0;
  const pathParams = (op.parameters ?? []).filter((p) => p.in === 'path');
  const queryParams = (op.parameters ?? []).filter((p) => p.in === 'query');
  const bodySchema = op.requestBody?.content?.['application/json']?.schema;
  const fill = (overrides: Record<string, string> = {}) =>
    template.replace(/\{([^}]+)\}/g, (_, name: string) => overrides[name] ?? encodeURIComponent(values[name] ?? 'x'));
  const basePath = fill();
  // A body that is one of several shapes is filled after the first.
  const baseShape = bodySchema?.anyOf?.[0] ?? bodySchema;
  const baseBody = baseShape
    ? Object.fromEntries((baseShape.required ?? []).map((k: string) => [k, plausible(baseShape.properties?.[k])]))
    : undefined;
  const json = { 'content-type': 'application/json' };
  const withBody = (text: string | undefined) => (text === undefined ? {} : { body: text });
  const baseText = baseBody ? JSON.stringify(baseBody) : undefined;
  const auths: [string, Record<string, string>][] = [
    ['session', { authorization: `Bearer ${creds.session}` }],
    ['creator key', { authorization: `Bearer ${creds.creatorKey}` }],
    ['anonymous', {}],
  ];

  for (const [who, auth] of auths) {
    const add = (label: string, path: string, expect: Outcome, body = baseText, headers: Record<string, string> = {}) =>
      cases.push({
        label: `${method} ${template} [${who}] ${label}`,
        method,
        path,
        headers: { ...(body !== undefined ? json : {}), ...auth, ...headers },
        ...withBody(body),
        expect,
      });

    /** Anonymous on a protected route: some routes check the caller first, others the input. */
    const orSignIn = [
      ...(secured && who === 'anonymous' ? [SIGN_IN] : []),
      ...(template.startsWith('/operator/') && who !== 'anonymous' ? [who === 'session' ? NOT_OPERATOR : KEY_NOT_SESSION] : []),
      // A session-only route may check the credential before the input.
      ...(sessionOnly && who === 'creator key' && !template.startsWith('/operator/') ? [KEY_NOT_SESSION] : []),
    ];
    for (const param of pathParams) {
      const unreadable = oneOf(invalid(param.name, 'params field'));
      // A value of the right shape for this parameter names nothing that exists.
      const wrongOrMissing = oneOf(invalid(param.name, 'params field'), NOT_FOUND, ...orSignIn);
      const bad: [string, string, Outcome][] = [
        ['NUL', '%00', URL_NUL],
        ['NUL inside', 'ab%00cd', URL_NUL],
        ['bad UUID', 'not-a-uuid', wrongOrMissing],
        ['dashes as UUID', '------------------------------------', wrongOrMissing],
        ['broken percent-encoding', '%ZZ', unreadable],
        ['overlong UTF-8', '%C0%AF', unreadable],
        ['truncated UTF-8', '%F0%9F', unreadable],
        ['traversal', '..%2F..%2Fetc%2Fpasswd', wrongOrMissing],
        ['huge', 'z'.repeat(4000), unreadable],
        ['emoji', encodeURIComponent('😀'), wrongOrMissing],
        ['lone surrogate escape', '%ED%A0%80', unreadable],
      ];
      for (const [what, value, outcome] of bad) add(`path ${param.name}: ${what}`, fill({ [param.name]: value }), outcome);
    }

    for (const param of queryParams) {
      const q = (value: string) => `${basePath}?${param.name}=${value}`;
      add(`query ${param.name}: NUL`, q('%00'), URL_NUL);
      add(`query ${param.name}: NUL inside`, q('a%00b'), URL_NUL);
      for (const [what, value] of [
        ['huge', 'q'.repeat(6000)],
        ['broken percent-encoding', '%ZZ'],
        ['array syntax', '[]'],
        ['negative', '-1'],
        ['fraction', '1.5'],
        ['overflow', '1e999'],
        ['repeated', `a&${param.name}=b`],
        ['prototype', `x&__proto__=1&constructor=2`],
      ] as const) {
        add(`query ${param.name}: ${what}`, q(value), 'no-5xx');
      }
      // A whole number with a range (`days`, `limit`, `offset`): anything else is refused, naming it.
      if (param.schema?.multipleOf === 1 && typeof param.schema.minimum === 'number' && typeof param.schema.maximum === 'number') {
        const { minimum, maximum } = param.schema;
        const outOfRange = oneOf(
          { status: 400, error: `Invalid request: query field "${param.name}": must be a whole number from ${minimum} to ${maximum}` },
          ...orSignIn,
        );
        for (const value of [String(minimum - 1), '-1', '1e400', '-1e400', String(maximum + 1), '7.5', 'week', '']) {
          add(`query ${param.name}: ${value || 'empty'}`, q(value), outOfRange);
        }
      }
      if (param.name === 'cursor') {
        for (const [what, value] of [
          ['not base64', '***'],
          ['uncastable value', cursorOf(['x', ZERO_ID])],
          ['bad id', cursorOf(['2026-01-01T00:00:00.000Z', 'nope'])],
          ['object', cursorOf({ a: 1 })],
          ['deep', Buffer.from(deepArray(5000)).toString('base64url')],
        ] as const) {
          add(`query cursor: ${what}`, q(value), oneOf({ status: 400, error: /^Invalid request: (query )?field "cursor": / }, ...orSignIn));
        }
      }
    }

    if (bodySchema) {
      const wholeBodies: [string, string, Outcome][] = [
        ['array', '[]', NOT_OBJECT],
        ['string', '"x"', NOT_OBJECT],
        ['number', '1', NOT_OBJECT],
        ['false', 'false', NOT_OBJECT],
        ['truncated', '{"a":', NOT_JSON],
        ['empty', '', NOT_JSON],
        ['not JSON', 'hello', NOT_JSON],
        ['deep objects', deepObject(20_000), TOO_DEEP],
        ['deep arrays', deepArray(20_000), TOO_DEEP],
        ['NUL key', '{"a\\u0000":1}', withNul('a\u0000')],
        ['lone surrogate key', '{"\\ud800":1}', withSurrogate('\ud800')],
        ['over the body limit', JSON.stringify({ pad: 'p'.repeat(1_100_000) }), TOO_LARGE],
      ];
      for (const [what, text, outcome] of wholeBodies) add(`body: ${what}`, basePath, outcome, text);
      const rest = JSON.stringify(baseBody).slice(1);
      add(
        'body: prototype keys',
        basePath,
        'no-5xx',
        `{"__proto__":{"polluted":1},"constructor":{"prototype":{"x":1}}${rest === '}' ? '' : ','}${rest}`,
      );

      for (const [prop, propSchema] of Object.entries<Schema>(bodySchema.properties ?? {})) {
        const set = (raw: string) => JSON.stringify({ ...baseBody, [prop]: '\u0001HOSTILE\u0001' }).replace('"\\u0001HOSTILE\\u0001"', raw);
        const types = typesOf(propSchema);
        if (types) {
          for (const wrong of [12345, true, {}, [], 'abc', null]) {
            if (!types.has(jsonType(wrong)))
              add(`field ${prop}: wrong type ${jsonType(wrong)}`, basePath, oneOf(invalid(prop)), set(JSON.stringify(wrong)));
          }
        }
        add(`field ${prop}: NUL`, basePath, withNul(prop), set('"a\\u0000b"'));
        add(`field ${prop}: lone surrogate`, basePath, withSurrogate(prop), set('"\\ud800"'));
        add(`field ${prop}: deep arrays`, basePath, TOO_DEEP, set(deepArray(6000)));
        add(`field ${prop}: deep objects`, basePath, TOO_DEEP, set(deepObject(6000)));
        const limited = typeof propSchema.maxLength === 'number' || types?.has('string') === false;
        add(`field ${prop}: huge string`, basePath, limited ? oneOf(invalid(prop)) : 'no-5xx', set(JSON.stringify(HUGE)));
        if (propSchema.format === 'uuid') add(`field ${prop}: bad UUID`, basePath, oneOf(invalid(prop)), set('"0000-not-a-uuid"'));
        if (propSchema.const !== undefined || propSchema.enum)
          add(`field ${prop}: outside the enum`, basePath, oneOf(invalid(prop)), set('"nope"'));
        for (const [what, raw] of [
          ['emoji', '"😀"'],
          ['huge number', '1e308'],
          ['negative', '-1'],
          ['fraction', '0.5'],
          ['hex string', '"0x10"'],
          ['digits string', '"99999999999999999999999"'],
          ['negative string', '"-5000000"'],
          ['empty string', '""'],
        ] as const) {
          add(`field ${prop}: ${what}`, basePath, 'no-5xx', set(raw));
        }
      }
    }
  }

  // Headers, with the operation otherwise well formed.
  const header = (label: string, headers: Record<string, string>, expect: Outcome, body = baseText) =>
    cases.push({
      label: `${method} ${template} header ${label}`,
      method,
      path: basePath,
      headers: { ...(body !== undefined ? json : {}), ...headers },
      ...withBody(body),
      expect,
    });
  // A broken credential on a protected route: `Invalid token`; a cookie on a write without an
  // Origin is refused as cross-site before the cookie is read.
  const credentialCase: Outcome = secured ? oneOf(BAD_TOKEN) : 'no-5xx';
  const cookieCase: Outcome = secured ? oneOf(BAD_TOKEN, CROSS_SITE) : 'no-5xx';
  header('cookie with broken percent-encoding', { cookie: 'market_token=%ZZ' }, cookieCase);
  header('cookie that looks like JSON', { cookie: 'market_token={"sub":"x"}' }, cookieCase);
  header('cookie with NUL', { cookie: 'market_token=a%00b' }, cookieCase);
  header('refresh cookie broken', { cookie: 'market_refresh=%ZZ; market_token=%E0%A4%A' }, cookieCase);
  header('bearer junk', { authorization: 'Bearer junk' }, credentialCase);
  header('basic auth', { authorization: 'Basic Zm9vOmJhcg==' }, credentialCase);
  header('bearer huge', { authorization: `Bearer ${'j'.repeat(8000)}` }, credentialCase);
  header('bearer fake key', { authorization: `Bearer sk_${'x'.repeat(200)}` }, credentialCase);
  header('bearer empty', { authorization: 'Bearer ' }, credentialCase);
  header('JWT with a non-UUID sid', { authorization: `Bearer ${creds.forgedSid}` }, credentialCase);
  header(
    'JWT alg none',
    { authorization: `Bearer ${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from('{"sub":"x"}').toString('base64url')}.` },
    credentialCase,
  );
  header('hostile request id', { 'x-request-id': '../../etc/passwd\u00e9', authorization: `Bearer ${creds.session}` }, 'no-5xx');
  header('garbage forwarded-for', { 'x-forwarded-for': 'not-an-ip, , 999.1.1.1', authorization: `Bearer ${creds.session}` }, 'no-5xx');
  if (bodySchema) {
    // Elysia reads a JSON-looking text/plain body as JSON; which content types cookie-authenticated
    // writes accept is the cross-site request guard's decision, so here only: never a 5xx.
    header('text/plain body', { 'content-type': 'text/plain', authorization: `Bearer ${creds.session}` }, 'no-5xx', baseText);
    header(
      'form body with NUL',
      { 'content-type': 'application/x-www-form-urlencoded', authorization: `Bearer ${creds.session}` },
      refused(400, 'Invalid request: the body must not contain NUL characters'),
      'a=%00',
    );
    header(
      'multipart without boundary',
      { 'content-type': 'multipart/form-data', authorization: `Bearer ${creds.session}` },
      refused(400, 'Malformed request body: expected valid multipart form data'),
      '--x\r\n',
    );
    header(
      'JSON body in the wrong charset',
      { 'content-type': 'application/json', authorization: `Bearer ${creds.session}` },
      'no-5xx',
      '\ufeff{}',
    );
  }
  return cases;
}

/** Methods no route answers: must be 404/405 in the error shape, never an empty answer. */
export function unknownMethodCases(template: string, values: Plausible): HostileCase[] {
  const path = template.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(values[name] ?? 'x'));
  // Methods Bun's Request keeps as they are (it turns names it does not know into GET).
  return ['TRACE', 'PROPFIND', 'PURGE', 'MKCOL', 'QUERY'].map((method) => ({
    label: `${method} ${template}`,
    method,
    path,
    headers: {},
    expect: refused(404, 'Not found'),
  }));
}
