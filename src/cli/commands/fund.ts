import { parseArgs } from 'node:util';
import { getAddress, isAddress, type Address } from 'viem';
import { formatPriceUsd, parsePrice } from 'skill-market/x402';
import { giveTestGas, mintTestUsdc } from '../../dev/chain';
import { readDevProfile } from '../../dev/profile';
import { CommandFailure, reportFailures } from '../consumer';
import { UsageError } from '../errors';

/** What `market fund` mints when no amount is given: $10 of test USDC. */
const DEFAULT_AMOUNT = '$10';

/**
 * `market fund <address> [amount] --dev [dir]`: mints test USDC on the local chain of a `market dev`
 * to any wallet (a wallet made with `market wallet new`, a skill's payer in a test), default $10,
 * and gives it 0.01 test ETH when it holds less (gas for the transactions a payer sends itself,
 * such as a channel's timed withdrawal).
 * Only a dev marketplace has a token anyone here may mint: without --dev it refuses.
 */
export async function fundCommand(args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({ args, options: { dev: { type: 'string' } }, strict: true, allowPositionals: true });
  const [to, amountText = DEFAULT_AMOUNT, ...extra] = positionals;
  if (!to || extra.length > 0) throw new UsageError('usage: market fund <address> [amount, default $10] --dev [dir]');
  if (values.dev === undefined)
    throw new UsageError('fund mints test USDC on the local chain of market dev only: pass --dev (or --dev <its directory>)');
  if (!isAddress(to, { strict: false })) throw new UsageError(`"${to}" is not a 0x address`);
  let amount: bigint;
  try {
    amount = parsePrice(amountText);
  } catch {
    throw new UsageError(`"${amountText}" is not an amount of USDC (e.g. 10 or $0.50)`);
  }
  const profile = readDevProfile(values.dev);
  await reportFailures(async () => {
    const address = getAddress(to.toLowerCase()) as Address;
    const balance = await mintTestUsdc(profile.rpcUrl, profile.asset as Address, address, amount).catch((error: Error) => {
      throw new CommandFailure(
        `cannot mint on the local chain at ${profile.rpcUrl} (is market dev running?): ${error.message.split('\n')[0]}`,
      );
    });
    const gas = await giveTestGas(profile.rpcUrl, address);
    process.stdout.write(
      `Minted ${formatPriceUsd(amount)} test USDC to ${address}; it now holds ${formatPriceUsd(balance)}${gas ? ', and 0.01 test ETH for gas' : ''}.\n`,
    );
  });
}
