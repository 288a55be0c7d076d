/**
 * The signed-in account's standing with the operators (GET /moderation/me): whether it is an
 * operator (the dashboard then shows the Operator section), whether it is suspended and why, and
 * which of its skills are hidden and why. Loaded once per signed-in account; `reloadStanding`
 * after a change.
 */
import { signal } from '@preact/signals';
import { type ModerationStanding, REGISTRY_ROUTES } from 'skill-market/registry';
import { call, registry } from './api';

/** undefined until loaded (or when it could not be): the dashboard then shows no operator tools. */
export const standing = signal<ModerationStanding | undefined>(undefined);

let loadedFor: string | undefined;

/** Loads the standing of `walletAddress`'s account unless already loaded for it. */
export async function loadStanding(walletAddress: string): Promise<void> {
  if (loadedFor === walletAddress) return;
  loadedFor = walletAddress;
  await reloadStanding();
}

async function reloadStanding(): Promise<void> {
  try {
    standing.value = await call(() => registry.call(REGISTRY_ROUTES.moderationStanding));
  } catch {
    standing.value = undefined;
    loadedFor = undefined;
  }
}
