// The accounts of cutroom's own sign-in, one small JSON file each under the data dir (auth/accounts/): who an
// account is (a person the operator listed, a service key, or the operator) and, on the service backend, the service
// key it was given at sign-in, sealed (secrets.ts) and bound to the account. An account's id is a token's subject;
// it never contains a key or a name that could be one (a key's account is named by a hash of it).
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { seal, unseal } from './secrets.js';

export type AccountKind = 'user' | 'key' | 'operator';

export interface Account {
  id: string;
  kind: AccountKind;
  /** A listed person's name (kind user). */
  name?: string;
  /** The service key given at sign-in, sealed. */
  sealedKey?: string;
}

/** The folder name of a caller who signs in with a key: the same as when the key is sent as a bearer (http/callers.ts). */
export type KeyCallerId = (key: string) => string;

export const userAccountId = (name: string) => `user-${name}`;
export const keyAccountId = (callerId: string) => `key-${callerId}`;
export const OPERATOR_ACCOUNT = 'operator';

export class Accounts {
  private readonly cache = new Map<string, Account>();

  constructor(
    private readonly dir: string,
    private readonly sealKey: Buffer,
  ) {}

  private fileOf(id: string): string {
    return join(this.dir, `${createHash('sha256').update(id).digest('hex').slice(0, 40)}.json`);
  }

  async get(id: string): Promise<Account | undefined> {
    const hit = this.cache.get(id);
    if (hit) return hit;
    try {
      const account = JSON.parse(await readFile(this.fileOf(id), 'utf8')) as Account;
      if (account.id !== id) return undefined;
      this.remember(account);
      return account;
    } catch {
      return undefined;
    }
  }

  /** Writes the account (whole, under a temporary name renamed over the old). */
  async put(account: Account): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const file = this.fileOf(account.id);
    const temp = `${file}.${process.pid}.${Date.now()}.tmp`;
    await writeFile(temp, JSON.stringify(account), { mode: 0o600 });
    await rename(temp, file);
    this.remember(account);
  }

  /** The account with this service key sealed into it. */
  withKey(account: Account, key: string): Account {
    return { ...account, sealedKey: seal(this.sealKey, key, account.id) };
  }

  /** The service key kept for the account, if any (none when it was sealed under another secret). */
  keyOf(account: Account): string | undefined {
    return account.sealedKey ? unseal(this.sealKey, account.sealedKey, account.id) : undefined;
  }

  private remember(account: Account): void {
    this.cache.delete(account.id);
    this.cache.set(account.id, account);
    if (this.cache.size > 1000) this.cache.delete(this.cache.keys().next().value!);
  }
}
