import { afterAll, describe, expect, it } from 'bun:test';
import { createDecipheriv, scryptSync } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { keccak256, toHex } from 'viem';
import { generatePrivateKey, privateKeyToAddress } from 'viem/accounts';
import { decryptKeystore, encryptKeystore, KeystoreError, readKeystoreFile, writeKeystoreFile } from 'skill-market/wallet';

const work = mkdtempSync(join(tmpdir(), 'market-keystore-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

// The two test vectors of the Web3 Secret Storage definition (ethereum.org), same key and passphrase.
const VECTOR_PASSWORD = 'testpassword';
const VECTOR_KEY = '0x7a28b5ba57c53603b0b07b56bba752f7784bf506fa95edc395f5cf6c7514fe9d';
const VECTOR_ADDRESS = '0x008AeEda4D805471dF9b2A5B0f38A0C3bCBA786b';
const PBKDF2_VECTOR = {
  crypto: {
    cipher: 'aes-128-ctr',
    cipherparams: { iv: '6087dab2f9fdbbfaddc31a909735c1e6' },
    ciphertext: '5318b4d5bcd28de64ee5559e671353e16f075ecae9f99c7a79a38af5f869aa46',
    kdf: 'pbkdf2',
    kdfparams: { c: 262144, dklen: 32, prf: 'hmac-sha256', salt: 'ae3cd4e7013836a3df6bd7241b12db061dbe2c6785853cce422d148a624ce0bd' },
    mac: '517ead924a9d0dc3124507e3393d175ce3ff7c1e96529c6c555ce9e51205e9b2',
  },
  id: '3198bc9c-6672-5ab3-d995-4942343ae5b6',
  version: 3,
};
const SCRYPT_VECTOR = {
  crypto: {
    cipher: 'aes-128-ctr',
    cipherparams: { iv: '83dbcc02d8ccb40e466191a123791e0e' },
    ciphertext: 'd172bf743a674da9cdad04534d56926ef8358534d458fffccd4e6ad2fbde479c',
    kdf: 'scrypt',
    kdfparams: { dklen: 32, n: 262144, r: 1, p: 8, salt: 'ab0c7876052600dd703518d6fc3fe8984592145b591fc8fb5c6d43190334ba19' },
    mac: '2103ac29920d71da29f15d75b4a16dbe95cfd7ff8faea1056c33131d846e3097',
  },
  id: '3198bc9c-6672-5ab3-d995-4942343ae5b6',
  version: 3,
};
const FAST = { scrypt: { n: 1024 } };

const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => 'resolved',
    (e: unknown) => (e instanceof KeystoreError ? e.code : String(e)),
  );

describe('Web3 Secret Storage v3 keystores', () => {
  it('opens the definition’s PBKDF2 test vector', async () => {
    const key = await decryptKeystore(PBKDF2_VECTOR, VECTOR_PASSWORD);
    expect(key).toBe(VECTOR_KEY);
    expect(privateKeyToAddress(key)).toBe(VECTOR_ADDRESS);
  });

  it('opens the definition’s scrypt test vector (n 2^18, r 1, p 8)', async () => {
    expect(await decryptKeystore(JSON.stringify(SCRYPT_VECTOR), VECTOR_PASSWORD)).toBe(VECTOR_KEY);
  });

  it('refuses the test vectors with a wrong passphrase', async () => {
    expect(await failure(decryptKeystore(PBKDF2_VECTOR, 'testpassword!'))).toBe('wrong_passphrase');
  });

  it('writes the standard format: version 3, uuid, address, aes-128-ctr, scrypt with geth’s standard cost, keccak MAC', async () => {
    const key = generatePrivateKey();
    const keystore = await encryptKeystore(key, 'a good passphrase');
    expect(Object.keys(keystore).sort()).toEqual(['address', 'crypto', 'id', 'version']);
    expect(keystore.version).toBe(3);
    expect(keystore.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(keystore.address).toBe(privateKeyToAddress(key).slice(2).toLowerCase());
    const { crypto } = keystore;
    expect(crypto).toMatchObject({ cipher: 'aes-128-ctr', kdf: 'scrypt', kdfparams: { dklen: 32, n: 262144, r: 8, p: 1 } });
    expect(crypto.cipherparams.iv).toMatch(/^[0-9a-f]{32}$/);
    expect(crypto.ciphertext).toMatch(/^[0-9a-f]{64}$/);
    expect(crypto.mac).toMatch(/^[0-9a-f]{64}$/);
    expect((crypto.kdfparams as { salt: string }).salt).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(keystore)).not.toContain(key.slice(2));
  });

  it('is readable by an independent implementation of the definition (node:crypto alone)', async () => {
    const key = generatePrivateKey();
    const keystore = await encryptKeystore(key, 'independent check', FAST);
    const params = keystore.crypto.kdfparams as { n: number; r: number; p: number; salt: string };
    const derived = scryptSync('independent check', Buffer.from(params.salt, 'hex'), 32, { N: params.n, r: params.r, p: params.p });
    const ciphertext = Buffer.from(keystore.crypto.ciphertext, 'hex');
    expect(keccak256(Buffer.concat([derived.subarray(16), ciphertext])).slice(2)).toBe(keystore.crypto.mac);
    const decipher = createDecipheriv('aes-128-ctr', derived.subarray(0, 16), Buffer.from(keystore.crypto.cipherparams.iv, 'hex'));
    expect(toHex(Buffer.concat([decipher.update(ciphertext), decipher.final()]))).toBe(key);
  });

  it('decrypts with the right passphrase and fails with a wrong one', async () => {
    const key = generatePrivateKey();
    const keystore = await encryptKeystore(key, 'right passphrase', FAST);
    expect(await decryptKeystore(keystore, 'right passphrase')).toBe(key);
    expect(await failure(decryptKeystore(keystore, 'wrong passphrase'))).toBe('wrong_passphrase');
    expect(await failure(decryptKeystore(keystore, ''))).toBe('wrong_passphrase');
  });

  it('detects tampering and refuses malformed, exotic or hostile files', async () => {
    const keystore = await encryptKeystore(generatePrivateKey(), 'pass phrase', FAST);
    const flipped = {
      ...keystore,
      crypto: { ...keystore.crypto, ciphertext: (keystore.crypto.ciphertext[0] === 'a' ? 'b' : 'a') + keystore.crypto.ciphertext.slice(1) },
    };
    expect(await failure(decryptKeystore(flipped, 'pass phrase'))).toBe('wrong_passphrase');
    const otherAddress = { ...keystore, address: privateKeyToAddress(generatePrivateKey()).slice(2) };
    expect(await failure(decryptKeystore(otherAddress, 'pass phrase'))).toBe('address_mismatch');
    expect(await failure(decryptKeystore({ ...keystore, version: 1 }, 'pass phrase'))).toBe('invalid_keystore');
    expect(await failure(decryptKeystore('not json', 'pass phrase'))).toBe('invalid_keystore');
    expect(await failure(decryptKeystore({ ...keystore, crypto: { ...keystore.crypto, cipher: 'aes-128-cbc' } }, 'pass phrase'))).toBe(
      'unsupported_keystore',
    );
    const huge = { ...keystore, crypto: { ...keystore.crypto, kdfparams: { ...keystore.crypto.kdfparams, n: 2 ** 30 } } };
    expect(await failure(decryptKeystore(huge, 'pass phrase'))).toBe('unsupported_keystore');
  });

  it('writes keystore files with mode 0600 and never overwrites one', async () => {
    const path = join(work, 'nested', 'dir', 'wallet.json');
    const keystore = await encryptKeystore(generatePrivateKey(), 'pass phrase', FAST);
    await writeKeystoreFile(path, keystore);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(join(work, 'nested', 'dir')).mode & 0o777).toBe(0o700);
    expect(await readKeystoreFile(path)).toEqual(keystore);
    const other = await encryptKeystore(generatePrivateKey(), 'pass phrase', FAST);
    await expect(writeKeystoreFile(path, other)).rejects.toMatchObject({ code: 'EEXIST' });
    expect(JSON.parse(readFileSync(path, 'utf8')).id).toBe(keystore.id);
  });

  it('runs on Node 20+ without Bun: a bundle opens a keystore under node', async () => {
    const key = generatePrivateKey();
    const file = join(work, 'node.json');
    writeFileSync(file, JSON.stringify(await encryptKeystore(key, 'node passphrase', FAST)));
    const built = await Bun.build({
      entrypoints: [join(import.meta.dir, '../../sdk/wallet/index.ts')],
      target: 'node',
      format: 'esm',
      outdir: join(work, 'bundle'),
    });
    expect(built.success).toBe(true);
    const script = `import { loadSpendingWallet } from ${JSON.stringify(built.outputs[0]!.path)};
      const account = await loadSpendingWallet({ keystorePath: ${JSON.stringify(file)}, passphrase: 'node passphrase' });
      console.log(account.address);`;
    const node = Bun.spawn(['node', '--input-type=module', '-e', script], { stdout: 'pipe', stderr: 'pipe' });
    const [code, out, err] = await Promise.all([node.exited, new Response(node.stdout).text(), new Response(node.stderr).text()]);
    expect(err).toBe('');
    expect(code).toBe(0);
    expect(out.trim()).toBe(privateKeyToAddress(key));
  });

  it('bundles for a browser page with no node: import, and what the page writes opens on the server', async () => {
    const built = await Bun.build({
      entrypoints: [join(import.meta.dir, '../../sdk/wallet/keystore.ts')],
      target: 'browser',
      format: 'esm',
      outdir: join(work, 'browser'),
    });
    expect(built.success).toBe(true);
    const code = await built.outputs[0]!.text();
    expect(code).not.toMatch(/from\s*["']node:/);
    const { encryptKeystore: pageEncrypt } = (await import(built.outputs[0]!.path)) as typeof import('skill-market/wallet');
    const key = generatePrivateKey();
    const written = await pageEncrypt(key, 'made in a page', FAST);
    expect(await decryptKeystore(written, 'made in a page')).toBe(key);
  });
});
