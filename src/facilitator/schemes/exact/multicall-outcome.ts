/**
 * What a batched settlement transaction meant for each of its members. A member is settled when
 * the receipt holds the token's `AuthorizationUsed(payer, nonce)` and a matching `Transfer`
 * (payer → payee, amount); any other member's call failed inside the batch (`allowFailure`), and
 * the chain tells why: the authorization was used by another transaction, or the payer's balance
 * was short.
 */
import { parseEventLogs, type Address, type Hex, type TransactionReceipt } from 'viem';
import { sameAddress } from 'skill-market/x402';
import { tokenAbi, type ChainReader } from './chain';
import type { MulticallOutcome, MemberOutcome } from './multicall-store';
import { REASONS } from './reasons';
import type { AuthorizationRow } from './store';

/** A member's outcome with a message for its settle answer (the message is not stored). */
export type AnsweredOutcome = MemberOutcome & { message?: string };

type Member = Pick<AuthorizationRow, 'id' | 'asset' | 'payer' | 'payee' | 'nonce' | 'amount'>;

/** The outcome of a mined batch transaction, member by member. */
export async function multicallOutcome(
  chain: ChainReader,
  receipt: TransactionReceipt,
  members: readonly Member[],
): Promise<MulticallOutcome & { members: AnsweredOutcome[] }> {
  const blockNumber = Number(receipt.blockNumber);
  const gasUsed = Number(receipt.gasUsed);
  const mined = receipt.status === 'success';
  const logs = mined ? parseEventLogs({ abi: tokenAbi, logs: receipt.logs }) : [];
  const used = new Set<string>();
  const transfers: { asset: string; from: string; to: string; value: bigint; taken: boolean }[] = [];
  for (const log of logs) {
    if (log.eventName === 'AuthorizationUsed') used.add(usedKey(log.address, log.args.authorizer, log.args.nonce));
    if (log.eventName === 'Transfer') transfers.push({ asset: log.address, ...log.args, taken: false });
  }
  const outcomes = await Promise.all(
    members.map(async (m): Promise<AnsweredOutcome> => {
      if (used.has(usedKey(m.asset, m.payer, m.nonce))) {
        const transfer = transfers.find(
          (t) =>
            !t.taken &&
            sameAddress(t.asset, m.asset) &&
            sameAddress(t.from, m.payer) &&
            sameAddress(t.to, m.payee) &&
            t.value === BigInt(m.amount),
        );
        if (transfer) {
          transfer.taken = true;
          return { id: m.id, state: 'settled' };
        }
        return { id: m.id, state: 'failed', reason: REASONS.transferEventMismatch, message: 'Mined without the expected Transfer event' };
      }
      return memberFailure(chain, m);
    }),
  );
  return {
    status: mined ? 'confirmed' : 'reverted',
    blockNumber,
    gasUsed,
    ...(mined ? {} : { error: 'The batch transaction reverted' }),
    members: outcomes,
  };
}

/** The outcome of a batch transaction never mined: a member whose authorization another transaction used is paid. */
export async function droppedMulticallOutcome(chain: ChainReader, members: readonly Member[]): Promise<MulticallOutcome> {
  const outcomes = await Promise.all(
    members.map(async (m): Promise<MemberOutcome> => {
      const used = await chain.authorizationUsed(m.asset as Address, m.payer as Address, m.nonce as Hex);
      return used ? { id: m.id, state: 'settled' } : { id: m.id, state: 'failed', reason: REASONS.transactionDropped };
    }),
  );
  return { status: 'dropped', error: 'Never mined before its authorizations expired', members: outcomes };
}

/** Why a member's call failed, as the chain shows it now. */
async function memberFailure(chain: ChainReader, m: Member): Promise<AnsweredOutcome> {
  const [used, balance] = await Promise.all([
    chain.authorizationUsed(m.asset as Address, m.payer as Address, m.nonce as Hex).catch(() => undefined),
    chain.balanceOf(m.asset as Address, m.payer as Address).catch(() => undefined),
  ]);
  if (used === true) {
    return { id: m.id, state: 'failed', reason: REASONS.nonceAlreadyUsed, message: 'Another transaction used the authorization first' };
  }
  if (balance !== undefined && balance < BigInt(m.amount)) {
    const message = `The payer holds ${balance} of the ${m.amount} authorized`;
    return { id: m.id, state: 'failed', reason: REASONS.insufficientBalance, message };
  }
  return { id: m.id, state: 'failed', reason: REASONS.transactionFailed, message: 'The transfer failed inside the batch' };
}

const usedKey = (asset: string, payer: string, nonce: string) => `${asset}:${payer}:${nonce}`.toLowerCase();
