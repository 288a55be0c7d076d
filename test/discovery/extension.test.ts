/**
 * The `bazaar` extension a skill's resource carries and its service metadata, checked by the
 * unmodified `@x402/extensions` 2.27 validators: `info` satisfies `schema`, the input schema is
 * the body's, references still resolve, and metadata keeps to the Bazaar's rules.
 */
import { describe, expect, it } from 'bun:test';
import { isValidIconUrl, isValidServiceName, sanitizeTags, validateDiscoveryExtension } from '@x402/extensions/bazaar';
import { bazaarExtension } from 'skill-market/creator';
import { catalogueIconUrl, catalogueTags, isCatalogueText } from 'skill-market/x402';

const bodySchemaOf = (schema: Record<string, any>) => schema.properties.input.properties.body;

describe('the bazaar extension of a skill', () => {
  it('declares a POST with a JSON body whose schema is the input schema and whose example fits it', () => {
    const input = {
      type: 'object',
      properties: {
        text: { type: 'string', minLength: 12 },
        mode: { enum: ['fast', 'slow'] },
        count: { type: 'integer', exclusiveMinimum: 2, maximum: 9 },
        tags: { type: 'array', items: { type: 'string' }, minItems: 2 },
        options: { type: 'object', properties: { deep: { type: 'boolean' } }, required: ['deep'] },
        note: { type: 'string' },
      },
      required: ['text', 'mode', 'count', 'tags', 'options'],
    };
    const extension = bazaarExtension(input, null);
    expect(validateDiscoveryExtension(extension as never)).toEqual({ valid: true });
    expect(bodySchemaOf(extension.schema)).toEqual(input);
    expect(extension.info.input).toEqual({
      type: 'http',
      method: 'POST',
      bodyType: 'json',
      body: { text: 'exampleeeeee', mode: 'fast', count: 3, tags: ['example', 'example'], options: { deep: false } },
    });
    expect(extension.info.output).toEqual({ type: 'json' });
  });

  it('prefers the input schema’s own example, and shows the output schema’s in the paid answer', () => {
    const input = {
      type: 'object',
      properties: { city: { type: 'string', pattern: '^[A-Z][a-z]+$' } },
      required: ['city'],
      examples: [{ city: 'Paris' }],
    };
    const output = { type: 'object', properties: { temp: { type: 'number' } }, examples: [{ temp: 21.5 }] };
    const extension = bazaarExtension(input, output);
    expect(validateDiscoveryExtension(extension as never)).toEqual({ valid: true });
    expect(extension.info.input.body).toEqual({ city: 'Paris' });
    expect(extension.info.output).toEqual({ type: 'json', example: { success: true, result: { temp: 21.5 } } });
    // An example that breaks its own schema is not shown.
    const wrong = bazaarExtension(input, { type: 'object', properties: { temp: { type: 'number' } }, examples: [{ temp: 'warm' }] });
    expect(wrong.info.output).toEqual({ type: 'json' });
  });

  it('re-points local references below the body, drops $schema and $id, and still validates', () => {
    const input = {
      $schema: 'http://json-schema.org/draft-07/schema#',
      $id: 'https://skills.example.com/schemas/route.json',
      type: 'object',
      definitions: { point: { type: 'object', properties: { lat: { type: 'number' } }, required: ['lat'] } },
      properties: { from: { $ref: '#/definitions/point' }, to: { $ref: '#/definitions/point' }, default: { type: 'string' } },
      required: ['from', 'to'],
    };
    const extension = bazaarExtension(input, null);
    expect(validateDiscoveryExtension(extension as never)).toEqual({ valid: true });
    const body = bodySchemaOf(extension.schema);
    expect(body.properties.from).toEqual({ $ref: '#/properties/input/properties/body/definitions/point' });
    expect('$id' in body || '$schema' in body).toBe(false);
    expect(extension.info.input.body).toEqual({ from: { lat: 0 }, to: { lat: 0 } });
  });

  it('describes a skill without schemas as any JSON in and out', () => {
    const extension = bazaarExtension(null, null);
    expect(validateDiscoveryExtension(extension as never)).toEqual({ valid: true });
    expect(extension.info.input.body).toEqual({});
    expect(bodySchemaOf(extension.schema)).toEqual({});
  });

  it('falls back to any JSON for a schema only an older draft reads (items as a list)', () => {
    const extension = bazaarExtension({ type: 'array', items: [{ type: 'string' }, { type: 'number' }] }, null);
    expect(validateDiscoveryExtension(extension as never)).toEqual({ valid: true });
  });
});

describe('service metadata under the Bazaar’s rules', () => {
  it('keeps the first five valid tags, each once whatever its case, as the reference sanitizer does', () => {
    const groups = ['Text', 'text', 'Über', 'x'.repeat(33), '', 'tools', 'a', 'b', 'c', 'd'];
    expect(catalogueTags(groups)).toEqual(['Text', 'tools', 'a', 'b', 'c']);
    expect(catalogueTags(groups)).toEqual(sanitizeTags(groups) as string[]);
  });

  it('takes as a service name only what the reference accepts (and no blank name)', () => {
    const candidates = ['Alice Tools', 'weather-now', 'Zoë', 'x'.repeat(33), '   ', 'tab\there', ''];
    expect(candidates.map(isCatalogueText)).toEqual([true, true, false, false, false, false, false]);
    for (const name of candidates.filter(isCatalogueText)) expect(isValidServiceName(name)).toBe(true);
  });

  it('answers the same schemas with an equal copy each time: changing one answer leaves the next intact', () => {
    const input = { type: 'object', properties: { city: { type: 'string', examples: ['Lyon'] } }, required: ['city'] };
    const first = bazaarExtension(input, null);
    const expected = structuredClone(first);
    (first.info.input as { body: unknown }).body = { city: 'changed' };
    bodySchemaOf(first.schema).required = [];
    const again = bazaarExtension({ ...input }, null);
    expect(again).toEqual(expected);
    expect(again.info.input.body).toEqual({ city: 'Lyon' });
    // Other schemas, another answer.
    expect(bazaarExtension({ ...input, properties: { town: { type: 'string' } } }, null).info.input.body).not.toEqual({ city: 'Lyon' });
  });

  it('shows an icon only over https at a named host, never an address, loopback or credentials', () => {
    const urls = [
      'https://cdn.example.com/a.png',
      'http://cdn.example.com/a.png',
      'https://127.0.0.1/a.png',
      'https://2130706433/a.png',
      'https://0x7f000001/a.png',
      'https://[::1]/a.png',
      'https://localhost/a.png',
      'https://user:pw@cdn.example.com/a.png',
      'data:image/png;base64,AAAA',
      `https://cdn.example.com/${'a'.repeat(2048)}`,
    ];
    expect(urls.map(catalogueIconUrl)).toEqual(['https://cdn.example.com/a.png', ...Array(urls.length - 1).fill(undefined)]);
    // Everything sent is something the reference accepts.
    expect(isValidIconUrl('https://cdn.example.com/a.png')).toBe(true);
  });
});
