import { describe, expect, it } from 'bun:test';
import { devOperators } from '../../src/dev/stack';

describe('the operators of market dev', () => {
  it('are the demo wallet, and the wallets OPERATOR_ADDRESSES names in the shell', () => {
    const demo = '0x2F16e8fefC5F48f373e149761c8BcFaf11F99705';
    const own = '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC';
    expect(devOperators(demo, {})).toBe(demo);
    expect(devOperators(demo, { OPERATOR_ADDRESSES: ` ${own}, ` })).toBe(`${demo},${own}`);
  });
});
