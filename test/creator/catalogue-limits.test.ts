/**
 * What crawling catalogues would drop or refuse is said when a skill server starts: a service name,
 * tags or an icon the x402 Bazaar does not keep, schemas too large for the 402 header, a price under
 * what CDP's facilitator settles; a server within every limit hears nothing.
 */
import { describe, expect, it } from 'bun:test';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { serve, type Skills, skill } from 'skill-market/creator';
import { recordingLogger } from '../support/skill-server';

const CDP = 'https://api.cdp.coinbase.com/platform/v2/x402';
const handler = () => ({ ok: true });

/** The warnings a skill server of `skills` logs at start with these catalogue settings. */
async function catalogueLimitWarnings(
  skills: Skills,
  settings: { serviceName?: string; iconUrl?: string; facilitatorUrl: string },
): Promise<string[]> {
  const logger = recordingLogger();
  const server = await serve(skills, {
    port: 0,
    hostname: '127.0.0.1',
    wallet: privateKeyToAccount(generatePrivateKey()).address,
    network: 'eip155:84532',
    trackCalls: false,
    channels: false,
    logger,
    env: {},
    ...settings,
  });
  await server.stop();
  return logger.lines
    .filter((l) => l.startsWith('warn '))
    .map((l) => l.slice('warn '.length))
    .filter((l) => !l.startsWith('the facilitator'));
}

describe('catalogue limits', () => {
  it('says nothing of a server within every limit', async () => {
    const skills = { tides: skill({ price: '$0.001', description: 'Tide times', groups: ['sea', 'weather'] }, handler) };
    expect(
      await catalogueLimitWarnings(skills, { serviceName: 'Tide Co', iconUrl: 'https://tides.example/icon.png', facilitatorUrl: CDP }),
    ).toEqual([]);
  });

  it('names each value a catalogue would drop, with the limit and who sets it', async () => {
    const skills = {
      tagged: skill({ price: '$0.01', groups: ['a', 'b', 'c', 'd', 'e', 'f', 'Übersetzung'] }, handler),
      huge: skill({ price: '$0.01', inputSchema: { type: 'object', description: 'x'.repeat(20_000) } }, handler),
      cheap: skill({ price: '$0.0005' }, handler),
    };
    const warnings = await catalogueLimitWarnings(skills, {
      serviceName: 'A service name far longer than thirty-two characters',
      iconUrl: 'http://tides.example/icon.png',
      facilitatorUrl: CDP,
    });
    expect(warnings).toEqual([
      'serviceName "A service name far longer than thirty-two characters" is left out of the 402: the x402 Bazaar keeps printable ASCII of at most 32 characters',
      'iconUrl http://tides.example/icon.png is left out of the 402: catalogues show only an https icon at a named host',
      'skill "tagged": groups "f", "Übersetzung" are not sent as tags: the x402 Bazaar keeps at most 5, each printable ASCII of at most 32 characters',
      'skill "huge": its input schema is left out of the 402, whose header a crawler reads only up to 16 KB: shorten the schemas so catalogues can build a valid request',
      'skill "cheap" at $0.0005 is under $0.001, the least CDP\'s facilitator settles: its payments through it are refused',
    ]);
    // Under another facilitator the price is no concern of CDP's.
    expect(await catalogueLimitWarnings({ cheap: skills.cheap }, { facilitatorUrl: 'https://facilitator.example' })).toEqual([]);
  });

  it('refuses a description over 500 characters when the skill is defined, naming the limit', () => {
    expect(() => skill({ price: '$0.01', description: 'd'.repeat(501) }, handler)).toThrow(
      "CDP's facilitator refuses a longer resource.description",
    );
    expect(skill({ price: '$0.01', description: 'd'.repeat(500) }, handler).description).toHaveLength(500);
  });
});
