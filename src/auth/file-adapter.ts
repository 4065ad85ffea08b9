// Where cutroom's own authorization server keeps what it issues and registers (oidc-provider's adapter interface):
// registered clients, grants, sessions, interactions, authorization codes and refresh tokens, one JSON file each under
// the data dir (auth/store/<model>/), so that a restart signs nobody out and replicas that share the data dir agree.
// A file holds its expiry and is not served after it; expired files are swept as new ones are written. The index a
// grant's revocation needs is a folder per grant with an empty file per member (no file is ever read, changed and
// written back by two writers at once). Access tokens are JWTs and are not stored.
import { createHash } from 'node:crypto';
import { mkdir, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

type Payload = Record<string, unknown> & { grantId?: string; uid?: string; userCode?: string; consumed?: number };
interface Stored {
  payload: Payload;
  /** ms since the epoch; absent: kept until destroyed. */
  expiresAt?: number;
}

const nameOf = (id: string) => createHash('sha256').update(id).digest('hex').slice(0, 48);
const GRANTABLE = new Set([
  'AccessToken',
  'AuthorizationCode',
  'RefreshToken',
  'DeviceCode',
  'BackchannelAuthenticationRequest',
]);
/** How often (in writes of a model) its folder is swept of expired files. */
const SWEEP_EVERY = 50;

async function writeJson(file: string, value: unknown): Promise<void> {
  const temp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  await writeFile(temp, JSON.stringify(value), { mode: 0o600 });
  await rename(temp, file);
}

async function readJson<T>(file: string): Promise<T | undefined> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

/** A factory oidc-provider calls with each model's name. */
export function fileAdapter(root: string) {
  const writes = new Map<string, number>();
  return class FileAdapter {
    private readonly dir: string;
    constructor(private readonly model: string) {
      this.dir = join(root, model);
    }

    private file(id: string): string {
      return join(this.dir, `${nameOf(id)}.json`);
    }

    private index(kind: 'uid' | 'userCode', value: string): string {
      return join(root, `${this.model}-by-${kind}`, `${nameOf(value)}.json`);
    }

    private grantDir(grantId: string): string {
      return join(root, 'grants', nameOf(grantId));
    }

    async upsert(id: string, payload: Payload, expiresIn?: number): Promise<void> {
      await mkdir(this.dir, { recursive: true, mode: 0o700 });
      const expiresAt = typeof expiresIn === 'number' ? Date.now() + expiresIn * 1000 : undefined;
      await writeJson(this.file(id), { payload, ...(expiresAt ? { expiresAt } : {}) } satisfies Stored);
      for (const kind of ['uid', 'userCode'] as const) {
        const value = payload[kind];
        if (typeof value !== 'string') continue;
        await mkdir(join(root, `${this.model}-by-${kind}`), { recursive: true, mode: 0o700 });
        await writeJson(this.index(kind, value), { id, ...(expiresAt ? { expiresAt } : {}) });
      }
      if (GRANTABLE.has(this.model) && typeof payload.grantId === 'string') {
        const dir = this.grantDir(payload.grantId);
        await mkdir(dir, { recursive: true, mode: 0o700 });
        await writeFile(join(dir, `${this.model}.${nameOf(id)}`), '');
      }
      const count = (writes.get(this.model) ?? 0) + 1;
      writes.set(this.model, count);
      if (count % SWEEP_EVERY === 0) void this.sweep();
    }

    async find(id: string): Promise<Payload | undefined> {
      const stored = await readJson<Stored>(this.file(id));
      if (!stored) return undefined;
      if (stored.expiresAt !== undefined && stored.expiresAt <= Date.now()) {
        await this.destroy(id);
        return undefined;
      }
      return stored.payload;
    }

    private async findBy(kind: 'uid' | 'userCode', value: string): Promise<Payload | undefined> {
      const entry = await readJson<{ id: string }>(this.index(kind, value));
      return entry ? this.find(entry.id) : undefined;
    }

    findByUid(uid: string) {
      return this.findBy('uid', uid);
    }

    findByUserCode(userCode: string) {
      return this.findBy('userCode', userCode);
    }

    async consume(id: string): Promise<void> {
      const stored = await readJson<Stored>(this.file(id));
      if (!stored) return;
      stored.payload.consumed = Math.floor(Date.now() / 1000);
      await writeJson(this.file(id), stored);
    }

    async destroy(id: string): Promise<void> {
      await rm(this.file(id), { force: true });
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      const dir = this.grantDir(grantId);
      const members = await readdir(dir).catch(() => undefined);
      if (!members) return;
      for (const member of members) {
        const [model, name] = member.split('.') as [string, string];
        await rm(join(root, model, `${name}.json`), { force: true });
      }
      await rm(dir, { recursive: true, force: true });
    }

    /** Removes this model's expired files (best effort: a file another writer replaces meanwhile is left). */
    private async sweep(): Promise<void> {
      try {
        for (const name of await readdir(this.dir)) {
          if (!name.endsWith('.json')) continue;
          const stored = await readJson<Stored>(join(this.dir, name));
          if (stored?.expiresAt !== undefined && stored.expiresAt <= Date.now())
            await rm(join(this.dir, name), { force: true });
        }
      } catch {
        // A folder being written by another replica: swept next time.
      }
    }
  };
}
