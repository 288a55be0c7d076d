/**
 * Two paid skills, ready for `market serve examples/creator/skills.ts`.
 *
 *   MARKET_WALLET_ADDRESS=0x… market serve examples/creator/skills.ts --port 3002
 *
 * Add `--endpoint https://your.public.url --groups tools` (and MARKET_API_KEY) to register them.
 */
import { skill } from 'skill-market/creator';

/** No schemas: any JSON input is echoed back. */
const echo = skill({ price: '$0.001', description: 'Echoes its input back', groups: ['tools'] }, (input: unknown) => ({ echo: input }));

/** With input and output schemas: bad input is refused (400) before any payment. */
const wordCount = skill(
  {
    price: '$0.002',
    description: 'Counts the words and characters of a text',
    groups: ['text'],
    timeout: 5_000,
    inputSchema: {
      type: 'object',
      properties: { text: { type: 'string', maxLength: 100_000, examples: ['paid per call in test USDC'] } },
      required: ['text'],
      additionalProperties: false,
    },
    outputSchema: {
      type: 'object',
      properties: { words: { type: 'integer', minimum: 0 }, characters: { type: 'integer', minimum: 0 } },
      required: ['words', 'characters'],
    },
  },
  ({ text }: { text: string }) => ({ words: text.split(/\s+/).filter(Boolean).length, characters: text.length }),
);

export default { echo, 'word-count': wordCount };
