/**
 * A consumer in a dozen lines: find a skill, look at its terms, pay for one call under a cap.
 *
 *   MARKET_API_URL=http://localhost:3000 MARKET_PRIVATE_KEY=0x… \
 *     npx bun examples/consumer/call-a-skill.ts "word count" '{"text":"hello paid world"}'
 *
 */
import { MarketError, SkillMarket } from 'skill-market';
import { DEFAULT_API_URL } from 'skill-market/registry';

const [query = '', input = '{}'] = process.argv.slice(2);

const market = new SkillMarket({
  apiUrl: process.env.MARKET_API_URL ?? DEFAULT_API_URL,
  wallet: process.env.MARKET_PRIVATE_KEY, // or: await loadSpendingWallet({ keystorePath, passphrase })
  apiKey: process.env.MARKET_API_KEY, // optional: records usage under your account
  maxPrice: '$0.05', // never more than this per call
  budget: '$0.50', // never more than this in total for this process
});

const { skills } = await market.search(query, { limit: 5 });
const chosen = skills[0];
if (!chosen) {
  console.error(`no skill matches "${query}"`);
  process.exit(1);
}
console.error(`calling ${chosen.slug} (${chosen.price} on ${chosen.network}): ${chosen.description ?? ''}`);

try {
  const { result, receipt } = await market.callWithReceipt(chosen.slug, JSON.parse(input));
  console.log(JSON.stringify(result, null, 2));
  console.error(receipt ? `paid ${receipt.price} to ${receipt.payTo}, tx ${receipt.transaction ?? '(no receipt)'}` : 'free call');
} catch (error) {
  // Refusals (terms_mismatch, max_price_exceeded, invalid_input, …) happen before anything is signed.
  if (error instanceof MarketError) console.error(`${error.code}: ${error.message} (charged: ${error.charged})`);
  else throw error;
  process.exitCode = 1;
} finally {
  await market.flush(); // let the usage record reach the registry before exiting
}
