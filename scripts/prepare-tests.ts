/**
 * Fills the caches every test process reads before `bun test` starts its workers, so that they do
 * not each make the same thing at once on a fresh checkout: `contracts` (the test contracts,
 * compiled by solc-js: about 9 s of CPU) or `database` (the migrated embedded database the tests
 * start from: initdb and the migrations, about 5 s). scripts/test.ts runs both side by side; each
 * does nothing when its cache is already there.
 */
import { compileContracts } from '../test/support/chain/compile';
import { migratedDump } from '../test/support/database';

const what = process.argv[2];
if (what === 'contracts') await compileContracts();
else if (what === 'database') await migratedDump();
else {
  console.error('usage: bun scripts/prepare-tests.ts contracts|database');
  process.exit(2);
}
