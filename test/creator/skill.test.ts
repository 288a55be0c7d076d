import { describe, expect, it } from 'bun:test';
import { DEFAULT_SKILL_TIMEOUT_MS, SkillDefinitionError, isSkill, skill } from 'skill-market/creator';

const handler = () => ({ ok: true });
const thrown = (fn: () => unknown): Error => {
  try {
    fn();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a throw');
};

describe('skill()', () => {
  it('keeps a valid definition, normalizing the price and groups, with the default timeout', () => {
    const s = skill(
      { price: ' $0.0010 ', description: 'Echo', groups: [' tools ', 'tools', 'text'], inputSchema: { type: 'object' } },
      handler,
    );
    expect(s.price).toBe('$0.001');
    expect(s.groups).toEqual(['tools', 'text']);
    expect(s.timeout).toBe(DEFAULT_SKILL_TIMEOUT_MS);
    expect(s.timeout).toBe(30_000);
    expect(s.description).toBe('Echo');
    expect(isSkill(s)).toBe(true);
    expect(Object.isFrozen(s)).toBe(true);
    expect(isSkill({ price: '$0.001', handler })).toBe(false);
  });

  it.each([
    ['a number', 0.001, 'price must be a dollar-prefixed decimal string'],
    ['thousands separators', '$1,000', 'Invalid price'],
    ['zero', '$0', 'must be greater than zero'],
    ['too many decimals', '$0.0000001', 'more than 6 decimals'],
    ['garbage', 'cheap', 'Invalid price'],
    ['a negative', '-$1', 'Invalid price'],
  ])('refuses a price that is %s', (_what, price, message) => {
    const error = thrown(() => skill({ price: price as string }, handler));
    expect(error).toBeInstanceOf(SkillDefinitionError);
    expect(error.message).toContain('price');
    expect(error.message).toContain(message);
  });

  it('refuses schemas that are not JSON Schemas, naming the option', () => {
    expect(thrown(() => skill({ price: '$0.01', inputSchema: { type: 'nonsense' } }, handler)).message).toContain(
      'inputSchema is not a usable JSON Schema',
    );
    expect(thrown(() => skill({ price: '$0.01', outputSchema: [] as never }, handler)).message).toContain(
      'outputSchema is not a usable JSON Schema',
    );
  });

  it('refuses a bad timeout, bad groups, unknown options and a missing handler', () => {
    for (const timeout of [0, 1.5, -1, 200_001])
      expect(thrown(() => skill({ price: '$0.01', timeout }, handler)).message).toContain('timeout must be');
    expect(thrown(() => skill({ price: '$0.01', groups: [' '] }, handler)).message).toContain('group name');
    expect(thrown(() => skill({ price: '$0.01', groups: 'tools' as never }, handler)).message).toContain('groups must be an array');
    expect(thrown(() => skill({ price: '$0.01', timeOut: 5 } as never, handler)).message).toContain('unknown option "timeOut"');
    expect(thrown(() => skill({ price: '$0.01' }, undefined as never)).message).toContain('handler');
    expect(thrown(() => skill(undefined as never, handler)).message).toContain('options must be an object');
  });

  it('sells without exact only where the call pays what it used: upto or channels', () => {
    expect(thrown(() => skill({ price: '$0.01', exact: false }, handler)).message).toContain(
      'exact: false needs upto: true or channels: true',
    );
    expect(thrown(() => skill({ price: '$0.01', upto: true, exact: 'no' as never }, handler)).message).toContain(
      'exact must be true or false',
    );
    expect(skill({ price: '$0.01', upto: true, exact: false }, handler).exact).toBe(false);
    expect(skill({ price: '$0.01', channels: true, exact: false }, handler).exact).toBe(false);
    expect('exact' in skill({ price: '$0.01', upto: true, exact: true }, handler)).toBe(false);
  });
});
