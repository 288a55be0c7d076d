/**
 * Channel vouchers signed ahead: while a call is in flight, the next call's voucher (the same
 * channel, the cumulative amount after this call plus the price) is signed in the background, so
 * the next call does not wait for the signature. Only a key held in this process signs ahead
 * (`signDigest`): a wallet that asks its user is never asked for a voucher no call needs. A voucher
 * signed ahead is used only when it is exactly the one the next call would sign (channel, signer,
 * cumulative amount); otherwise it is dropped. It stays in memory until a call sends it.
 */
import { batchSettlementDomain, type Hex, voucherDigest, voucherTypes } from '../../../x402/index';
import type { PaymentSigner } from '../../signer';

interface Ahead {
  max: bigint;
  /** The signer's address, lower case. */
  signer: string;
  /** The signature, started at most once. */
  signature(): Promise<Hex>;
}

export interface VouchersAhead {
  /** The voucher of `max` on the channel: the one signed ahead when it is that voucher, else a new signature. */
  sign(signer: PaymentSigner, channelId: Hex, max: bigint, chainId: number): Promise<Hex>;
  /** Signs the voucher of `max` ahead, once the current request is on its way (a local digest signer only). */
  start(signer: PaymentSigner, channelId: Hex, max: bigint, chainId: number): void;
  /** Waits until the channel's voucher signed ahead, if any, is signed. */
  ready(channelId: Hex): Promise<void>;
  /** Drops the channel's voucher signed ahead (its state changed). */
  drop(channelId: Hex): void;
}

/**
 * Runs `task` once the current turn has sent its request: setImmediate where there is one (Node,
 * Bun), whose turn comes as soon as the event loop has polled; a timer of 0 elsewhere. (A timer
 * waits at least 1 ms, so the signature then ran just as a local answer arrived, and delayed it.)
 */
function soon(task: () => void): void {
  const immediate = (globalThis as { setImmediate?: (task: () => void) => unknown }).setImmediate;
  if (immediate) immediate(task);
  else setTimeout(task, 0);
}

export function vouchersAhead(): VouchersAhead {
  const ahead = new Map<string, Ahead>();
  return {
    async sign(signer, channelId, max, chainId) {
      const key = channelId.toLowerCase();
      const early = ahead.get(key);
      ahead.delete(key);
      if (early && early.max === max && early.signer === signer.address.toLowerCase()) {
        const signature = await early.signature().catch(() => undefined);
        if (signature) return signature;
      }
      return signer.signDigest
        ? signer.signDigest(voucherDigest(channelId, max, chainId))
        : signer.signTypedData({
            domain: batchSettlementDomain(chainId),
            types: voucherTypes,
            primaryType: 'Voucher',
            message: { channelId, maxClaimableAmount: max },
          });
    },

    start(signer, channelId, max, chainId) {
      const signDigest = signer.signDigest;
      if (!signDigest) return;
      const key = channelId.toLowerCase();
      let signing: Promise<Hex> | undefined;
      const entry: Ahead = {
        max,
        signer: signer.address.toLowerCase(),
        signature: () => (signing ??= signDigest.call(signer, voucherDigest(channelId, max, chainId))),
      };
      ahead.set(key, entry);
      // After the current turn: the request is sent first, the signature is computed while it is answered.
      soon(() => {
        if (ahead.get(key) !== entry) return;
        entry.signature().catch(() => {
          if (ahead.get(key) === entry) ahead.delete(key);
        });
      });
    },

    async ready(channelId) {
      await ahead
        .get(channelId.toLowerCase())
        ?.signature()
        .catch(() => undefined);
    },

    drop(channelId) {
      ahead.delete(channelId.toLowerCase());
    },
  };
}
