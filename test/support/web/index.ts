export { launchBrowser, newContext, pageErrors, screenshot, SCREENSHOTS, VIEWPORTS, CHROMIUM } from './browser';
export { injectWallet, type TestWallet } from './wallet';
export { startWebRegistry, type WebRegistry, type WebRegistryOptions } from './registry';
export { simulateProvider, SOCIAL_EMAIL, type ProviderSimulation, type SimulatedUser } from './privy';
export { runInShell, type ShellRun } from './shell';
