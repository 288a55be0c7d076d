import { describe, expect, it } from 'bun:test';
import {
  MAX_HEADER_LENGTH,
  X402Error,
  decodePaymentPayload,
  decodePaymentRequired,
  decodeSettleResponse,
  encodeBase64Json,
  encodePaymentPayload,
  parsePaymentPayload,
  parsePaymentRequirements,
  parseSettleResponse,
  readPaymentHeader,
  readSettleResponseHeader,
  signAuthorization,
  type X402ErrorCode,
} from 'skill-market/x402';
import { NOW, makeTerms, newAccount, thrown } from './factories';

const terms = makeTerms();
const payload = await signAuthorization(newAccount(), terms.requirements, { now: NOW, resource: terms.paymentRequired.resource });
const json = () => structuredClone(payload) as unknown as Record<string, any>;

function expectCode(fn: () => unknown, code: X402ErrorCode, message?: string) {
  const error = thrown(fn);
  if (!(error instanceof X402Error)) throw new Error(`expected X402Error, got ${String(error)}`);
  expect(error.code).toBe(code);
  if (message !== undefined) expect(error.message).toBe(message);
}

const decoders = [
  ['payment payload', decodePaymentPayload, 'malformed_payment'],
  ['PaymentRequired', decodePaymentRequired, 'malformed_payment_required'],
  ['settle response', decodeSettleResponse, 'malformed_settle_response'],
] as const;

/** A valid encoding that contains '+' or '/', so its base64url form differs. */
function encodingWithSpecialChars(): string {
  for (let i = 0; i < 64; i++) {
    const encoded = encodeBase64Json({ ...json(), extensions: { pad: `${'?>'.repeat(i)}~ÿ` } });
    if (/[+/]/.test(encoded) && encoded.endsWith('=')) return encoded;
  }
  throw new Error('no suitable encoding found');
}

describe('header decoding rejects malformed base64 and JSON with X402Error', () => {
  const special = encodingWithSpecialChars();
  const badHeaders: [string, unknown][] = [
    ['empty string', ''],
    ['non-string', undefined],
    ['a number', 42],
    ['garbage', 'not base64!'],
    ['base64url alphabet', special.replace(/\+/g, '-').replace(/\//g, '_')],
    ['base64url without padding', special.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')],
    ['missing padding', special.replace(/=+$/, '')],
    ['embedded whitespace', `${special.slice(0, 8)} ${special.slice(8)}`],
    ['trailing newline', `${special}\n`],
    ['two header values joined by a comma', `${special}, ${special}`],
    ['a data URL', `data:application/json;base64,${special}`],
    ['too much padding', `${special}==`],
    ['oversize header', 'AAAA'.repeat(MAX_HEADER_LENGTH / 4 + 1)],
    ['invalid UTF-8', btoa('\xff\xfe\xfd')],
    ['not JSON', btoa('hello world')],
    ['truncated JSON', btoa('{"x402Version":2,')],
    ['JSON null', btoa('null')],
    ['JSON number', btoa('2')],
    ['JSON string', btoa('"x"')],
    ['JSON array', btoa('[]')],
    ['empty object', btoa('{}')],
  ];

  for (const [name, decode, code] of decoders) {
    for (const [label, header] of badHeaders) {
      it(`rejects ${label} as a ${name}`, () => {
        expectCode(() => decode(header as string), code);
      });
    }
  }

  it('accepts the valid encoding the cases above were derived from', () => {
    expect(decodePaymentPayload(special).x402Version).toBe(2);
  });
});

describe('payment payload shape validation', () => {
  const mutations: [string, (p: Record<string, any>) => void, X402ErrorCode, string][] = [
    ['x402Version missing', (p) => delete p.x402Version, 'malformed_payment', 'Malformed payment payload: /x402Version is missing'],
    ['x402Version as a string', (p) => (p.x402Version = '2'), 'malformed_payment', 'Malformed payment payload: /x402Version is missing'],
    ['x402Version 3', (p) => (p.x402Version = 3), 'unsupported_version', 'Unsupported x402Version 3'],
    ['x402Version 0', (p) => (p.x402Version = 0), 'unsupported_version', 'Unsupported x402Version 0'],
    ['scheme upto', (p) => (p.accepted.scheme = 'upto'), 'unsupported_scheme', 'Unsupported scheme "upto"'],
    ['accepted missing', (p) => delete p.accepted, 'malformed_payment', 'Malformed payment payload: /accepted Expected required property'],
    ['accepted an array', (p) => (p.accepted = []), 'malformed_payment', 'Malformed payment payload: /accepted Expected object'],
    ['payload missing', (p) => delete p.payload, 'malformed_payment', 'Malformed payment payload: /payload Expected required property'],
    ['payload null', (p) => (p.payload = null), 'malformed_payment', 'Malformed payment payload: /payload Expected object'],
    [
      'signature missing',
      (p) => delete p.payload.signature,
      'malformed_payment',
      'Malformed payment payload: /payload/signature Expected required property',
    ],
    [
      'signature without 0x',
      (p) => (p.payload.signature = p.payload.signature.slice(2)),
      'malformed_payment',
      "Malformed payment payload: /payload/signature Expected string to match '^0x(?:[0-9a-fA-F]{2})+$'",
    ],
    [
      'signature of odd length',
      (p) => (p.payload.signature = `${p.payload.signature}0`),
      'malformed_payment',
      "Malformed payment payload: /payload/signature Expected string to match '^0x(?:[0-9a-fA-F]{2})+$'",
    ],
    [
      'signature empty hex',
      (p) => (p.payload.signature = '0x'),
      'malformed_payment',
      "Malformed payment payload: /payload/signature Expected string to match '^0x(?:[0-9a-fA-F]{2})+$'",
    ],
    [
      'signature non-hex',
      (p) => (p.payload.signature = `0x${'zz'.repeat(65)}`),
      'malformed_payment',
      "Malformed payment payload: /payload/signature Expected string to match '^0x(?:[0-9a-fA-F]{2})+$'",
    ],
    [
      'authorization missing',
      (p) => delete p.payload.authorization,
      'malformed_payment',
      'Malformed payment payload: /payload/authorization Expected required property',
    ],
    [
      'from too short',
      (p) => (p.payload.authorization.from = '0x1234'),
      'malformed_payment',
      "Malformed payment payload: /payload/authorization/from Expected string to match '^0x[0-9a-fA-F]{40}$'",
    ],
    [
      'to without 0x',
      (p) => (p.payload.authorization.to = 'a'.repeat(40)),
      'malformed_payment',
      "Malformed payment payload: /payload/authorization/to Expected string to match '^0x[0-9a-fA-F]{40}$'",
    ],
    [
      'to of 41 hex',
      (p) => (p.payload.authorization.to = `0x${'a'.repeat(41)}`),
      'malformed_payment',
      "Malformed payment payload: /payload/authorization/to Expected string to match '^0x[0-9a-fA-F]{40}$'",
    ],
    [
      'value as a number',
      (p) => (p.payload.authorization.value = 1000),
      'malformed_payment',
      'Malformed payment payload: /payload/authorization/value Expected string',
    ],
    [
      'value negative',
      (p) => (p.payload.authorization.value = '-1000'),
      'malformed_payment',
      "Malformed payment payload: /payload/authorization/value Expected string to match '^(?:0|[1-9][0-9]{0,77})$'",
    ],
    [
      'value with leading zero',
      (p) => (p.payload.authorization.value = '01000'),
      'malformed_payment',
      "Malformed payment payload: /payload/authorization/value Expected string to match '^(?:0|[1-9][0-9]{0,77})$'",
    ],
    [
      'value in hex',
      (p) => (p.payload.authorization.value = '0x3e8'),
      'malformed_payment',
      "Malformed payment payload: /payload/authorization/value Expected string to match '^(?:0|[1-9][0-9]{0,77})$'",
    ],
    [
      'value decimal fraction',
      (p) => (p.payload.authorization.value = '1000.5'),
      'malformed_payment',
      "Malformed payment payload: /payload/authorization/value Expected string to match '^(?:0|[1-9][0-9]{0,77})$'",
    ],
    [
      'value above uint256',
      (p) => (p.payload.authorization.value = '9'.repeat(78)),
      'malformed_payment',
      'Malformed payment payload: value exceeds uint256',
    ],
    [
      'validAfter missing',
      (p) => delete p.payload.authorization.validAfter,
      'malformed_payment',
      'Malformed payment payload: /payload/authorization/validAfter Expected required property',
    ],
    [
      'validBefore empty',
      (p) => (p.payload.authorization.validBefore = ''),
      'malformed_payment',
      "Malformed payment payload: /payload/authorization/validBefore Expected string to match '^(?:0|[1-9][0-9]{0,77})$'",
    ],
    [
      'nonce of 63 hex',
      (p) => (p.payload.authorization.nonce = `0x${'1'.repeat(63)}`),
      'malformed_payment',
      "Malformed payment payload: /payload/authorization/nonce Expected string to match '^0x[0-9a-fA-F]{64}$'",
    ],
    [
      'nonce as a number',
      (p) => (p.payload.authorization.nonce = 7),
      'malformed_payment',
      'Malformed payment payload: /payload/authorization/nonce Expected string',
    ],
    [
      'accepted amount as number',
      (p) => (p.accepted.amount = 1000),
      'malformed_payment',
      'Malformed payment payload: /accepted/amount Expected string',
    ],
    [
      'accepted amount above uint256',
      (p) => (p.accepted.amount = '9'.repeat(78)),
      'malformed_payment',
      'Malformed payment payload: amount exceeds uint256',
    ],
    [
      'accepted network v1 name',
      (p) => (p.accepted.network = 'base'),
      'malformed_payment',
      "Malformed payment payload: /accepted/network Expected string to match '^eip155:[1-9][0-9]{0,15}$'",
    ],
    [
      'accepted network huge chain id',
      (p) => (p.accepted.network = 'eip155:9999999999999999'),
      'invalid_network',
      'Invalid network "eip155:9999999999999999": expected eip155:<chainId>',
    ],
    [
      'accepted payTo bad',
      (p) => (p.accepted.payTo = '0xnothex'),
      'malformed_payment',
      "Malformed payment payload: /accepted/payTo Expected string to match '^0x[0-9a-fA-F]{40}$'",
    ],
    [
      'accepted maxTimeoutSeconds string',
      (p) => (p.accepted.maxTimeoutSeconds = '60'),
      'malformed_payment',
      'Malformed payment payload: /accepted/maxTimeoutSeconds Expected integer',
    ],
    [
      'accepted maxTimeoutSeconds zero',
      (p) => (p.accepted.maxTimeoutSeconds = 0),
      'malformed_payment',
      'Malformed payment payload: /accepted/maxTimeoutSeconds Expected integer to be greater or equal to 1',
    ],
    [
      'accepted extra a string',
      (p) => (p.accepted.extra = 'x'),
      'malformed_payment',
      'Malformed payment payload: /accepted/extra Expected union value',
    ],
    [
      'resource without url',
      (p) => (p.resource = { description: 'x' }),
      'malformed_payment',
      'Malformed payment payload: /resource Expected union value',
    ],
    [
      'resource url a number',
      (p) => (p.resource = { url: 5 }),
      'malformed_payment',
      'Malformed payment payload: /resource Expected union value',
    ],
    [
      'extensions an array',
      (p) => (p.extensions = [1]),
      'malformed_payment',
      'Malformed payment payload: /extensions Expected union value',
    ],
  ];

  // Each mutation is refused with its own code and a message naming what is wrong (the field's
  // path), so a decoder refusing every payload alike fails here.
  for (const [label, mutate, code, message] of mutations) {
    it(`rejects a payload with ${label} (${code})`, () => {
      const p = json();
      mutate(p);
      expectCode(() => decodePaymentPayload(encodeBase64Json(p)), code, message);
    });
  }

  it('rejects a v1 payload on an unknown network name', () => {
    const v1 = { x402Version: 1, scheme: 'exact', network: 'polygon', payload: payload.payload };
    expectCode(() => parsePaymentPayload(v1), 'invalid_network');
  });

  it('rejects a v1 payload of another scheme', () => {
    const v1 = { x402Version: 1, scheme: 'upto', network: 'base', payload: payload.payload };
    expectCode(() => parsePaymentPayload(v1), 'unsupported_scheme');
  });

  it('refuses to encode a malformed payload', () => {
    const p = json();
    p.payload.authorization.value = 5;
    expectCode(() => encodePaymentPayload(p as never), 'malformed_payment');
  });

  it('never throws anything but X402Error on randomly mutated payloads', () => {
    const values = [null, 0, -1, 1.5, '', 'x', '0x', [], {}, true, '9'.repeat(100), { url: 1 }];
    let seed = 42;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    for (let i = 0; i < 2000; i++) {
      const p = json();
      const paths = [[], ['accepted'], ['payload'], ['payload', 'authorization'], ['resource'], ['accepted', 'extra']];
      const path = paths[random(paths.length)] as string[];
      let target: any = p;
      for (const key of path) target = target?.[key];
      if (target === null || typeof target !== 'object') continue;
      const keys = Object.keys(target);
      const key = keys[random(keys.length)] ?? 'x';
      if (random(3) === 0) delete target[key];
      else target[key] = values[random(values.length)];
      try {
        decodePaymentPayload(encodeBase64Json(p));
      } catch (error) {
        if (!(error instanceof X402Error)) throw new Error(`non-X402Error at ${path.join('.')}.${key}: ${String(error)}`);
      }
    }
  });

  it('never throws anything but X402Error on random base64 bytes', () => {
    for (let i = 0; i < 500; i++) {
      const bytes = crypto.getRandomValues(new Uint8Array(1 + (i % 97)));
      const header = btoa(String.fromCharCode(...bytes));
      for (const [, decode] of decoders) {
        try {
          decode(header);
        } catch (error) {
          if (!(error instanceof X402Error)) throw error;
        }
      }
    }
  });

  it('readPaymentHeader turns every malformed proof into an error result', () => {
    const result = readPaymentHeader(new Headers({ 'PAYMENT-SIGNATURE': btoa('{"x402Version":2}') }));
    expect(result.type).toBe('error');
    if (result.type === 'error') expect(result.error).toBeInstanceOf(X402Error);
  });
});

describe('requirements and receipts validation', () => {
  it('rejects malformed facilitator requirements with invalid_requirements', () => {
    const r = terms.requirements;
    for (const bad of [
      null,
      [],
      {},
      { ...r, amount: '1.5' },
      { ...r, asset: '0x1' },
      { ...r, network: 'base' },
      { ...r, maxTimeoutSeconds: -1 },
    ]) {
      expectCode(() => parsePaymentRequirements(bad), 'invalid_requirements');
    }
    expectCode(() => parsePaymentRequirements({ ...r, scheme: 'upto' }), 'unsupported_scheme');
    expect(parsePaymentRequirements(structuredClone(r))).toEqual(r);
  });

  it('rejects malformed receipts with malformed_settle_response', () => {
    const ok = { success: true, transaction: `0x${'12'.repeat(32)}`, network: 'eip155:8453' };
    for (const bad of [
      { ...ok, success: 'true' },
      { ...ok, transaction: '0x1234' },
      { ...ok, transaction: undefined },
      { ...ok, network: '' },
      { ...ok, payer: '0xnope' },
      { ...ok, errorReason: 5 },
    ]) {
      expectCode(() => parseSettleResponse(bad), 'malformed_settle_response');
    }
    expect(parseSettleResponse({ ...ok, payer: null, errorReason: null })).toEqual(ok);
  });

  it('readSettleResponseHeader returns a typed error for a bad receipt', () => {
    const result = readSettleResponseHeader(new Headers({ 'PAYMENT-RESPONSE': '%%%' }));
    expect(result.type === 'error' && result.error.code).toBe('malformed_settle_response');
  });

  it('decodePaymentRequired rejects v1 and missing accepts', () => {
    expectCode(() => decodePaymentRequired(btoa(JSON.stringify({ x402Version: 1, accepts: [] }))), 'unsupported_version');
    expectCode(() => decodePaymentRequired(encodeBase64Json({ ...terms.paymentRequired, accepts: [] })), 'malformed_payment_required');
    expectCode(
      () => decodePaymentRequired(encodeBase64Json({ ...terms.paymentRequired, resource: undefined })),
      'malformed_payment_required',
    );
  });
});
