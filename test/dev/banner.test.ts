/** The banner's paid call is built from the module's own input schema, so it passes that schema. */
import { describe, expect, it } from 'bun:test';
import { validateAgainst } from 'skill-market/json-schema';
import { exampleInput } from '../../src/dev/banner';

describe('the banner call input', () => {
  it("uses the schema's own examples, then each property's, and always fits the schema", () => {
    const whole = { type: 'object', properties: { q: { type: 'string' } }, required: ['q'], examples: [{ q: 'weather in Paris' }] };
    expect(exampleInput(whole)).toEqual({ q: 'weather in Paris' });

    const perProperty = {
      type: 'object',
      additionalProperties: false,
      properties: {
        city: { type: 'string', examples: ['Lyon'] },
        unit: { enum: ['celsius', 'fahrenheit'] },
        days: { type: 'integer', minimum: 3 },
        tags: { type: 'array', items: { type: 'string' }, minItems: 1 },
        where: { type: 'object', properties: { lat: { type: 'number' } }, required: ['lat'] },
        note: { type: 'string' },
      },
      required: ['city', 'unit', 'days', 'tags', 'where'],
    };
    const input = exampleInput(perProperty);
    expect(input).toEqual({ city: 'Lyon', unit: 'celsius', days: 3, tags: ['text'], where: { lat: 1 } });
    expect(validateAgainst(perProperty, input)).toEqual([]);
  });

  it('skips an example the schema refuses, and greets a skill without a schema', () => {
    const schema = { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'], examples: [{ n: 'two' }] };
    expect(exampleInput(schema)).toEqual({ n: 1 });
    expect(exampleInput(undefined)).toEqual({ hello: 'world' });
  });
});
