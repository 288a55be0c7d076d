/**
 * The facilitator's Bazaar (the x402 `bazaar` extension): declarations echoed in the payments it
 * verifies and settles, catalogued with what each resource's live 402 asks now, and served by its
 * own discovery API.
 */
export { createDiscoveryCatalogue } from './catalogue';
export { REFRESH_DEFAULTS, type RefreshReport } from './refresher';
export { facilitatorDiscoveryRoutes } from './routes';
export { extensionResponses } from './sidechannel';
export { withDiscovery, type Outcomes } from './service';
