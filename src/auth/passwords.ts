// Passwords of the people the operator lists (CUTROOM_OAUTH_USERS_FILE): each line `name:<hash>`, the hash made by
// `cutroom hash-password` (scrypt, Node's own, with a random salt), compared in constant time. The file is read again
// when it changes, so that adding or removing a person needs no restart.
import { randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';

const scrypt = (password: string, salt: Buffer, length: number, options: ScryptOptions) =>
  new Promise<Buffer>((resolve, reject) =>
    scryptCb(password, salt, length, options, (err, key) => (err ? reject(err) : resolve(key))),
  );

/** scrypt's cost: N = 2^15, r = 8 (32 MiB and tens of milliseconds a check, as OWASP suggests). */
const COST = { N: 1 << 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };
const LENGTH = 32;

/** `scrypt$N$r$p$salt$hash` (base64url). */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scrypt(password, salt, LENGTH, COST);
  return ['scrypt', COST.N, COST.r, COST.p, salt.toString('base64url'), hash.toString('base64url')].join('$');
}

/** A hash as read: its parameters and bytes, or undefined when it is not one hashPassword wrote. */
function parseHash(stored: string) {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return undefined;
  const [N, R, P] = [n, r, p].map(Number) as [number, number, number];
  if (![N, R, P].every((v) => Number.isInteger(v) && v > 0) || N > 1 << 20 || R > 32 || P > 16) return undefined;
  return { N, r: R, p: P, salt: Buffer.from(salt, 'base64url'), hash: Buffer.from(hash, 'base64url') };
}

export const isPasswordHash = (stored: string) => parseHash(stored) !== undefined;

/** Whether the password is the one hashed; a missing or malformed hash costs the same time and says no. */
export async function verifyPassword(password: string, stored: string | undefined): Promise<boolean> {
  const parsed = stored ? parseHash(stored) : undefined;
  const { N, r, p, salt, hash } = parsed ?? { ...COST, salt: Buffer.alloc(16), hash: Buffer.alloc(LENGTH) };
  const made = await scrypt(password, salt, hash.length || LENGTH, { N, r, p, maxmem: 128 * N * r * 2 });
  return parsed !== undefined && made.length === hash.length && timingSafeEqual(made, hash);
}

/** A name as people type it: letters, digits, `.`, `_`, `-` and `@`, up to 64. */
export const USER_NAME = /^[A-Za-z0-9._@-]{1,64}$/;

/** The users file's people: name -> hash. Throws with the line that is wrong (never its hash). */
export function parseUsers(text: string, file: string): Map<string, string> {
  const users = new Map<string, string>();
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (!line || line.startsWith('#')) return;
    const at = line.indexOf(':');
    const name = at > 0 ? line.slice(0, at) : '';
    const hash = at > 0 ? line.slice(at + 1) : '';
    if (!USER_NAME.test(name) || !isPasswordHash(hash))
      throw new Error(
        `${file} line ${i + 1}: each line is name:hash (a name of letters, digits, ".", "_", "-", "@"; the hash from \`cutroom hash-password\`)`,
      );
    users.set(name, hash);
  });
  return users;
}

/** The users file, read again when its modification time or size changes (checked at most every 2 s). */
export class UsersFile {
  private users = new Map<string, string>();
  private seen = '';
  private checkedAt = 0;

  constructor(readonly path: string) {}

  /** Reads it now: the start fails on a file that is missing or wrong. */
  async load(): Promise<number> {
    const info = await stat(this.path);
    this.users = parseUsers(await readFile(this.path, 'utf8'), this.path);
    this.seen = `${info.mtimeMs}:${info.size}`;
    this.checkedAt = Date.now();
    return this.users.size;
  }

  async hashOf(name: string): Promise<string | undefined> {
    if (Date.now() - this.checkedAt > 2000) {
      this.checkedAt = Date.now();
      try {
        const info = await stat(this.path);
        // A file made wrong while running keeps the people it had (the next good version is read).
        if (`${info.mtimeMs}:${info.size}` !== this.seen) await this.load().catch(() => undefined);
      } catch {
        this.users = new Map();
      }
    }
    return this.users.get(name);
  }
}
