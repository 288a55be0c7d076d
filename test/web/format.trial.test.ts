/** How the marketplace pages word a listing's free trial and volume prices. */
import { describe, expect, it } from 'bun:test';
import { priceWithTiers, trialText } from '../../src/web/app/lib/format';

describe('trial and volume price wording', () => {
  it('says the free calls per wallet and period, and nothing without a trial', () => {
    expect(trialText({ calls: 3, period: 'day' })).toBe('3 free calls a day per wallet');
    expect(trialText({ calls: 1, period: 'month' })).toBe('1 free call a month per wallet');
    expect(trialText(null)).toBeUndefined();
  });

  it('lists the price, then each volume price after its calls in the period', () => {
    const tiers = {
      period: 'month',
      steps: [
        { after: 1000, price: '$0.0008' },
        { after: 10_000, price: '$0.0005' },
      ],
    };
    expect(priceWithTiers({ price: '$0.001', tiers })).toBe(
      '$0.001 USDC, $0.0008 after 1,000 calls a month, $0.0005 after 10,000 calls a month',
    );
    expect(priceWithTiers({ price: '$0.001', tiers: null })).toBe('$0.001 USDC');
  });

  it('says a usage-based price is the most a call costs, with or without volume prices', () => {
    expect(priceWithTiers({ price: '$0.01', usageBased: true, tiers: null })).toBe('up to $0.01 USDC');
    const tiers = { period: 'month', steps: [{ after: 2, price: '$0.001' }] };
    expect(priceWithTiers({ price: '$0.003', usageBased: true, tiers })).toBe('up to $0.003 USDC, $0.001 after 2 calls a month');
    expect(priceWithTiers({ price: '$0.003', usageBased: false, tiers })).toBe('$0.003 USDC, $0.001 after 2 calls a month');
  });
});
