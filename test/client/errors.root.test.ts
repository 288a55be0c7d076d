/**
 * One error root in the SDK: every error class any entry point exports is a MarketError with a
 * machine code, so `catch (e) { if (e instanceof MarketError) … e.code }` sees all of them.
 */
import { describe, expect, it } from 'bun:test';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import * as root from 'skill-market';
import * as client from 'skill-market/client';
import * as creator from 'skill-market/creator';
import * as registry from 'skill-market/registry';
import * as wallet from 'skill-market/wallet';
import * as x402 from 'skill-market/x402';

const { MarketError } = client;
const entries = { root, client, creator, registry, wallet, x402 };

/** The exported classes that are errors, by entry point and name. */
function errorClasses(): [string, new (...args: never[]) => Error][] {
  const found: [string, new (...args: never[]) => Error][] = [];
  for (const [entry, exports] of Object.entries(entries)) {
    for (const [name, value] of Object.entries(exports)) {
      if (typeof value === 'function' && value.prototype instanceof Error) found.push([`${entry}.${name}`, value as never]);
    }
  }
  return found;
}

describe('the errors of the SDK', () => {
  it('all extend MarketError, whichever entry point exports them', () => {
    const classes = errorClasses();
    expect(classes.map(([name]) => name)).toEqual(
      expect.arrayContaining(['x402.X402Error', 'wallet.KeystoreError', 'wallet.WalletRegistrationError', 'creator.ServeConfigError']),
    );
    const outside = classes.filter(([, error]) => error !== MarketError && !(error.prototype instanceof MarketError));
    expect(outside.map(([name]) => name)).toEqual([]);
  });

  it('carry a machine code', () => {
    const thrown = [
      new x402.X402Error('invalid_price', 'bad price'),
      new wallet.KeystoreError('wrong_passphrase', 'wrong passphrase'),
      new wallet.WalletRegistrationError('0x0000000000000000000000000000000000000001', './w.json', new Error('down')),
      new creator.SkillDefinitionError('bad price'),
      new creator.ServeConfigError('no skills'),
      new creator.RegistrationError('registration failed', []),
      new creator.FacilitatorUnavailableError('facilitator down'),
      new creator.SkillTimeoutError(1000),
      new creator.ChannelStoreDamagedError('the channel snapshot is damaged'),
    ];
    expect(thrown.map((e) => [e.name, e.code, e.charged, e instanceof MarketError])).toEqual([
      ['X402Error', 'invalid_price', 'no', true],
      ['KeystoreError', 'wrong_passphrase', 'no', true],
      ['WalletRegistrationError', 'wallet_not_registered', 'no', true],
      ['SkillDefinitionError', 'invalid_skill', 'no', true],
      ['ServeConfigError', 'invalid_serve_config', 'no', true],
      ['RegistrationError', 'registration_failed', 'no', true],
      ['FacilitatorUnavailableError', 'facilitator_unavailable', 'no', true],
      ['SkillTimeoutError', 'skill_timeout', 'no', true],
      ['ChannelStoreDamagedError', 'channel_store_damaged', 'no', true],
    ]);
    expect(thrown[2]!.cause).toEqual(new Error('down'));
  });

  it('are declared on MarketError alone: no class in sdk/ extends Error directly but it', () => {
    const sdk = resolve(import.meta.dir, '../../sdk');
    const direct: string[] = [];
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        if (entry.name === 'node_modules' || entry.name === 'dist') continue;
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (entry.name.endsWith('.ts')) {
          for (const match of readFileSync(path, 'utf8').matchAll(/class (\w+) extends Error\b/g)) direct.push(match[1]!);
        }
      }
    };
    walk(sdk);
    expect(direct).toEqual(['MarketError']);
  });
});
