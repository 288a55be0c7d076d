/** A payment reference: a transaction hash on this registry's network links to the explorer; anything else is shown as is. */
import { pageConfig } from '../lib/config';

const TX_HASH = /^0x[0-9a-fA-F]{64}$/;

export function TxLink({ reference, network }: { reference: string | null; network: string }) {
  const explorer = pageConfig.value?.explorer;
  if (!reference) return <span class="muted">none recorded</span>;
  // Only a transaction hash on this registry's network has an explorer page; a nonce does not.
  if (explorer && network === pageConfig.value?.network.id && TX_HASH.test(reference)) {
    return (
      <a
        class="mono tx-hash"
        href={`${explorer.url}/tx/${reference}`}
        target="_blank"
        rel="noopener noreferrer"
        title={`Open in ${explorer.name}`}
      >
        {reference}
      </a>
    );
  }
  return <code class="tx-hash">{reference}</code>;
}
