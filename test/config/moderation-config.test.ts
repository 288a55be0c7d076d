/** OPERATOR_ADDRESSES and MARKET_REPORTS_PER_HOUR: who moderates, and how fast accounts may report. */
import { describe, expect, it } from 'bun:test';
import { ConfigError, loadRegistryConfig } from '../../src/config';

const A = '0x209693Bc6afc0C5328bA36FaF03C514EF312287C';
const B = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';

const refusal = (env: Record<string, string>) => {
  try {
    loadRegistryConfig(env, '/');
  } catch (error) {
    return error;
  }
  return undefined;
};

describe('the moderation settings', () => {
  it('has no operator unless set, and 10 reports an hour', () => {
    expect(loadRegistryConfig({}, '/').moderation).toEqual({ operators: [], reportsPerHour: 10 });
  });

  it('reads the operators as checksummed addresses, once each, whatever their case and spacing', () => {
    const env = { OPERATOR_ADDRESSES: ` ${A.toLowerCase()}, ${B} ,,${A.toUpperCase().replace('0X', '0x')}` };
    expect(loadRegistryConfig(env, '/').moderation.operators).toEqual([A, B]);
  });

  it('refuses an operator that is no address, naming the variable and the value', () => {
    const caught = refusal({ OPERATOR_ADDRESSES: `${A},alice.eth` });
    expect(caught).toBeInstanceOf(ConfigError);
    expect((caught as ConfigError).variable).toBe('OPERATOR_ADDRESSES');
    expect((caught as ConfigError).message).toContain('"alice.eth"');
  });

  it('takes the hourly limits, and refuses one out of range', () => {
    const config = loadRegistryConfig({ MARKET_REPORTS_PER_HOUR: '3', MARKET_NEW_SKILLS_PER_HOUR: '500' }, '/');
    expect(config.moderation).toMatchObject({ reportsPerHour: 3 });
    expect(config.catalogue).toMatchObject({ newSkillsPerHour: 500 });
    expect((refusal({ MARKET_REPORTS_PER_HOUR: '0' }) as ConfigError).variable).toBe('MARKET_REPORTS_PER_HOUR');
    expect((refusal({ MARKET_NEW_SKILLS_PER_HOUR: 'lots' }) as ConfigError).variable).toBe('MARKET_NEW_SKILLS_PER_HOUR');
  });
});
