/**
 * Bazaar discovery: the catalogue in the wire shape of the x402 `bazaar` extension, so agents on
 * standard x402 tooling find the skills and the exact terms their servers ask.
 */
export { discoveryRoutes } from './routes';
