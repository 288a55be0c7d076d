/** `--dev [dir]`: the directory is optional, and a slug or a module after a bare `--dev` stays what it is. */
import { afterAll, describe, expect, it } from 'bun:test';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { withDevDir } from '../../src/cli/dev-flag';

describe('--dev [dir]', () => {
  const cwd = mkdtempSync(join(tmpdir(), 'dev-flag-'));
  mkdirSync(join(cwd, '.market/dev'), { recursive: true });
  mkdirSync(join(cwd, 'other'));
  writeFileSync(join(cwd, 'skill.ts'), '');
  afterAll(() => rmSync(cwd, { recursive: true, force: true }));

  it('takes an existing directory, or a path naming no file, as its value', () => {
    expect(withDevDir(['call', '--dev', 'other', 'echo', '{}'], {}, cwd)).toEqual(['call', '--dev=other', 'echo', '{}']);
    expect(withDevDir(['--dev', 'elsewhere/dev', 'echo'], {}, cwd)).toEqual(['--dev=elsewhere/dev', 'echo']);
    expect(withDevDir(['--dev=x'], {}, cwd)).toEqual(['--dev=x']);
  });

  it('is .market/dev (else MARKET_DEV_DIR) when bare, before a slug, a module or a flag', () => {
    expect(withDevDir(['echo', '{}', '--dev'], {}, cwd)).toEqual(['echo', '{}', '--dev=.market/dev']);
    expect(withDevDir(['--dev', 'echo', '{}'], {}, cwd)).toEqual(['--dev=.market/dev', 'echo', '{}']);
    expect(withDevDir(['--dev', './skill.ts'], {}, cwd)).toEqual(['--dev=.market/dev', './skill.ts']);
    expect(withDevDir(['--dev', './missing.ts'], {}, cwd)).toEqual(['--dev=.market/dev', './missing.ts']);
    expect(withDevDir(['--dev', '--json'], { MARKET_DEV_DIR: 'other' }, cwd)).toEqual(['--dev=other', '--json']);
    expect(withDevDir(['--', '--dev'], {}, cwd)).toEqual(['--', '--dev']);
  });
});
