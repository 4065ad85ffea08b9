// Who may sign in to cutroom's own authorization server, and as which account: a person the operator lists, with
// their password (on the service backend with their service key, asked once and kept sealed, or the team's key), or
// anyone with a key cutroom takes as a bearer today (a service key on the service backend, the operator's
// CUTROOM_HTTP_TOKEN on the local backend). Repeated failures for one name (or one address, for keys) are refused
// for a while, whatever the password.
import { createHash, timingSafeEqual } from 'node:crypto';
import { Accounts, OPERATOR_ACCOUNT, keyAccountId, userAccountId, type Account, type KeyCallerId } from './accounts.js';
import { USER_NAME, type UsersFile, verifyPassword } from './passwords.js';

export interface SignInForm {
  name?: string;
  password?: string;
  key?: string;
  service_key?: string;
}

export type SignInResult = { ok: true; account: Account } | { ok: false; error: string };

export interface SignInOptions {
  backendKind: 'local' | 'remote';
  accounts: Accounts;
  users?: UsersFile;
  /** CUTROOM_HTTP_TOKEN: on the local backend, the operator signs in with it. */
  operatorToken?: string;
  /** The team's key serves people who give none (CUTROOM_HTTP_USE_SERVER_KEY). */
  teamKey: boolean;
  keyCallerId: KeyCallerId;
  /** Checks a service key with the service: undefined when it works, else why not (one line). */
  checkServiceKey?: (key: string) => Promise<string | undefined>;
}

const same = (a: string, b: string) =>
  timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());

/** Failures allowed per name (or address) in WINDOW_MS before it is refused until the window passes. */
const MAX_FAILURES = 5;
const WINDOW_MS = 15 * 60_000;

export class SignIn {
  private readonly failures = new Map<string, number[]>();

  constructor(private readonly opts: SignInOptions) {}

  get passwords(): boolean {
    return !!this.opts.users;
  }

  /** What the key field is called, when keys sign in. */
  get keyLabel(): string | undefined {
    if (this.opts.backendKind === 'remote') return 'your Video Jungle API key';
    return this.opts.operatorToken ? "the server's token (CUTROOM_HTTP_TOKEN)" : undefined;
  }

  /** Whether the password form asks for a service key after the password. */
  get serviceKey(): 'required' | 'optional' | undefined {
    if (this.opts.backendKind !== 'remote' || !this.opts.users) return undefined;
    return this.opts.teamKey ? 'optional' : 'required';
  }

  /** A signed-in account's name as shown. */
  shown(account: Account): string {
    if (account.kind === 'user') return account.name ?? account.id;
    if (account.kind === 'operator') return 'the operator';
    return 'your key';
  }

  private throttled(who: string): boolean {
    const now = Date.now();
    const recent = (this.failures.get(who) ?? []).filter((t) => now - t < WINDOW_MS);
    this.failures.set(who, recent);
    return recent.length >= MAX_FAILURES;
  }

  private failed(who: string, error: string): SignInResult {
    this.failures.set(who, [...(this.failures.get(who) ?? []), Date.now()]);
    if (this.failures.size > 10_000) this.failures.delete(this.failures.keys().next().value!);
    return { ok: false, error };
  }

  async check(form: SignInForm, address: string): Promise<SignInResult> {
    const key = form.key?.trim();
    if (key) return this.withKey(key, address);
    if (!this.opts.users) return { ok: false, error: `Give ${this.keyLabel ?? 'a key'}.` };
    return this.withPassword(form);
  }

  private async withKey(key: string, address: string): Promise<SignInResult> {
    const who = `address ${address}`;
    if (this.throttled(who)) return { ok: false, error: 'Too many failed sign-ins: try again in 15 minutes.' };
    if (this.opts.backendKind === 'local') {
      if (!this.opts.operatorToken || !same(key, this.opts.operatorToken))
        return this.failed(who, "That is not the server's token.");
      const account = (await this.opts.accounts.get(OPERATOR_ACCOUNT)) ?? {
        id: OPERATOR_ACCOUNT,
        kind: 'operator' as const,
      };
      await this.opts.accounts.put(account);
      return { ok: true, account };
    }
    const refused = await this.opts.checkServiceKey?.(key);
    if (refused) return this.failed(who, `The service refused that key: ${refused}`);
    const id = keyAccountId(this.opts.keyCallerId(key));
    const account = this.opts.accounts.withKey((await this.opts.accounts.get(id)) ?? { id, kind: 'key' }, key);
    await this.opts.accounts.put(account);
    return { ok: true, account };
  }

  private async withPassword(form: SignInForm): Promise<SignInResult> {
    const name = form.name?.trim() ?? '';
    const who = `name ${name}`;
    if (!USER_NAME.test(name)) return { ok: false, error: 'Give your name and password.' };
    if (this.throttled(who)) return { ok: false, error: 'Too many failed sign-ins: try again in 15 minutes.' };
    const hash = await this.opts.users!.hashOf(name);
    if (!(await verifyPassword(form.password ?? '', hash))) return this.failed(who, 'Wrong name or password.');
    const id = userAccountId(name);
    let account: Account = (await this.opts.accounts.get(id)) ?? { id, kind: 'user', name };
    const given = form.service_key?.trim();
    if (this.opts.backendKind === 'remote' && given) {
      const refused = await this.opts.checkServiceKey?.(given);
      if (refused) return { ok: false, error: `The service refused that key: ${refused}` };
      account = this.opts.accounts.withKey(account, given);
    }
    if (this.serviceKey === 'required' && !this.opts.accounts.keyOf(account))
      return { ok: false, error: 'Give your Video Jungle API key: it is asked once, then kept encrypted.' };
    await this.opts.accounts.put(account);
    return { ok: true, account };
  }
}
