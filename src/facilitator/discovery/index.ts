/**
 * The facilitator's Bazaar (the x402 `bazaar` extension): declarations echoed in the payments it
 * verifies and settles, catalogued and served by its own discovery API.
 */
export { createDiscoveryCatalogue } from './catalogue';
export { facilitatorDiscoveryRoutes } from './routes';
export { extensionResponses } from './sidechannel';
export { withDiscovery, type Outcomes } from './service';
