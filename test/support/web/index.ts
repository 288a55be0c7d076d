export { launchBrowser, newContext, pageErrors, screenshot, SCREENSHOTS, VIEWPORTS, CHROMIUM } from './browser';
export { injectWallet, walletPage, type TestWallet } from './wallet';
export { selfRegisteringServeOptions, startPaidWeb, type PaidWeb } from './paid';
export { startWebRegistry, type WebRegistry, type WebRegistryOptions } from './registry';
export { simulateProvider, SOCIAL_EMAIL, type ProviderSimulation, type SimulatedUser } from './privy';
export { runInShell, type ShellRun } from './shell';
