import { parseArgs } from 'node:util';
import type { CallOptions } from 'skill-market';
import { ReceiptError } from 'skill-market/client';
import { formatPriceUsd } from 'skill-market/x402';
import { CommandFailure } from '../consumer';
import { UsageError } from '../errors';
import { CLIENT_FLAGS, clientFrom, printJson, reportClientFailures, WALLET_FLAGS } from '../market-client';
import { terminalJson } from '../terminal';

/**
 * `market call <slug> '<json>' [--max-price P] [--fast] [--timeout MS] [--no-trial] [--json]`: pays and calls
 * a skill. The handler's result is printed as JSON on stdout, the receipt as one JSON line on
 * stderr (`amount` charged, and `deposit` apart from it when the call filled a payment channel).
 * A usage-based (`upto`) payment says the most it authorizes before signing and the charge after.
 * An answer whose signed receipt is refused is still printed (it was paid), and the command exits 1.
 * A call that deposits into a channel says so on stderr first, before anything is signed. The
 * input is `-` to read it from stdin, or omitted for `{}`. Nothing is paid when the input fails
 * the skill's schema, the price is above --max-price, or the server's terms differ from the
 * listing (exit code 1). A skill's free trial is used while the wallet has calls left (the wallet
 * signs the skill's sign-in; nothing is paid): stderr then says `{"trial":true,"trialCallsLeft":n}`.
 * `--no-trial` always pays.
 */
export async function callCommand(args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    strict: true,
    options: {
      ...CLIENT_FLAGS,
      ...WALLET_FLAGS,
      'max-price': { type: 'string' },
      fast: { type: 'boolean' },
      timeout: { type: 'string' },
      'no-trial': { type: 'boolean' },
    },
  });
  const [slug, text, ...extra] = positionals;
  if (!slug) throw new UsageError("call needs a skill slug: market call <slug> '<json>'");
  if (extra.length > 0) throw new UsageError(`call takes a slug and one JSON input, got also "${extra[0]}" (quote the JSON)`);
  const options: CallOptions = {
    mode: values.fast ? 'fast' : 'standard',
    trial: !values['no-trial'],
    beforePayment: ({ deposit, terms, skill }) => {
      // A usage-based price (upto, or a listing priced by use paid from a channel): the most, before paying.
      const byUse = terms.requirements.scheme === 'upto' || skill.usageBased === true;
      if (byUse)
        process.stderr.write(
          `Authorizing at most ${formatPriceUsd(BigInt(terms.requirements.amount))} (a usage-based price: the call is charged what it used, at most that).\n`,
        );
      if (!deposit) return;
      const { payTo, amount } = terms.requirements;
      process.stderr.write(
        `Depositing ${formatPriceUsd(deposit)} into a payment channel with ${payTo} (refundable; each call is charged from it); this call is charged ${byUse ? 'at most ' : ''}${formatPriceUsd(BigInt(amount))}.\n`,
      );
    },
  };
  if (values['max-price'] !== undefined) options.maxPrice = values['max-price'];
  if (values.timeout !== undefined) {
    const timeoutMs = Number(values.timeout);
    if (!Number.isSafeInteger(timeoutMs) || timeoutMs <= 0) throw new UsageError('--timeout must be a positive number of milliseconds');
    options.timeoutMs = timeoutMs;
  }
  await reportClientFailures(async () => {
    const input = parseInput(text === '-' ? await readStdin() : (text ?? '{}'));
    const market = await clientFrom(values, process.env, true);
    try {
      const { result, receipt, trial, trialCallsLeft } = await market.callWithReceipt(slug, input, options).catch((error: unknown) => {
        // Paid, but the answer's signed receipt was refused: the result is still the payer's (shown),
        // and the refusal, with the receipt, follows on stderr with exit code 1.
        if (error instanceof ReceiptError) printJson(error.result.result, values.json);
        throw error;
      });
      printJson(result, values.json);
      // A usage-based charge (upto, or a channel call to a skill listed as priced by use) says what it was charged of its most.
      if (receipt && (receipt.scheme === 'upto' || receipt.usageBased))
        process.stderr.write(`Charged ${formatPriceUsd(BigInt(receipt.amount))} of at most ${receipt.price}.\n`);
      process.stderr.write(`${terminalJson(trial ? { trial, trialCallsLeft } : { receipt }, true)}\n`);
    } finally {
      await market.flush();
    }
  });
}

function parseInput(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new CommandFailure(`the input is not JSON: ${text.slice(0, 80)}`);
  }
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
