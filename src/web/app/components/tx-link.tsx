/** A payment reference: a transaction hash on this registry's network links to the explorer; anything else is shown as is. */
import { pageConfig } from '../lib/config';

const TX_HASH = /^0x[0-9a-fA-F]{64}$/;
const shortHash = (hash: string) => `${hash.slice(0, 6)}…${hash.slice(-4)}`;

/** `short`: the hash shortened to its ends (the whole in the title), for narrow places. */
export function TxLink({ reference, network, short = false }: { reference: string | null; network: string; short?: boolean }) {
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
        title={`Open in ${explorer.name}: ${reference}`}
      >
        {short ? shortHash(reference) : reference}
      </a>
    );
  }
  return (
    <code class="tx-hash" title={reference}>
      {short && TX_HASH.test(reference) ? shortHash(reference) : reference}
    </code>
  );
}
