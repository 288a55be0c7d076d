/**
 * Prints the SDK's size as users get it and fails over budget: the packed tarball (`npm pack`,
 * under 204 kB) and the consumer entry `skill-market` bundled for a page, minified and gzipped,
 * viem left out (under 64 kB). Also each browser entry's size and that none reaches a Node
 * built-in. `npm run size` builds first; this script packs without building again.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BROWSER_SUBPATHS, browserFile, bundleForBrowser, CONSUMER_BUDGET_BYTES, kB, packSdk, TARBALL_BUDGET_BYTES } from './sdk-package';

const folder = await mkdtemp(join(tmpdir(), 'sdk-size-'));
let over = false;
try {
  const packed = await packSdk(folder, { build: false });
  const tarballOk = packed.size < TARBALL_BUDGET_BYTES;
  over ||= !tarballOk;
  console.log(
    `packed tarball: ${kB(packed.size)} (${packed.files.length} files, ${kB(packed.unpackedSize)} unpacked; budget ${kB(TARBALL_BUDGET_BYTES)}) ${tarballOk ? 'ok' : 'OVER'}`,
  );
  for (const subpath of BROWSER_SUBPATHS) {
    const bundle = await bundleForBrowser(await browserFile(subpath));
    const name = subpath === '.' ? 'skill-market' : `skill-market/${subpath.slice(2)}`;
    const budget =
      subpath === '.' ? ` (budget ${kB(CONSUMER_BUDGET_BYTES)}) ${bundle.gzipBytes < CONSUMER_BUDGET_BYTES ? 'ok' : 'OVER'}` : '';
    if (subpath === '.') over ||= bundle.gzipBytes >= CONSUMER_BUDGET_BYTES;
    over ||= bundle.builtins.length > 0;
    const builtins = bundle.builtins.length > 0 ? `; Node built-ins: ${bundle.builtins.join(', ')} (none allowed)` : '';
    const lazy = bundle.lazyBytes > 0 ? `; ${kB(bundle.lazyGzipBytes)} more loaded at first use` : '';
    console.log(
      `browser bundle ${name}: ${kB(bundle.gzipBytes)} min+gzip (${kB(bundle.bytes)} minified, without viem)${budget}${lazy}${builtins}`,
    );
  }
} finally {
  await rm(folder, { recursive: true, force: true });
}
if (over) process.exit(1);
