/**
 * Guarded outbound HTTP shared by the registry and the facilitator: the SSRF guard (public
 * addresses only, pinned) and the reader of a paid resource's live 402.
 */
export { checkHost, isPublicAddress, pinnedTarget, resolveWithDns, type PinnedTarget, type Resolve } from './address-guard';
export { readLive402, type Live402Method } from './live-402';
