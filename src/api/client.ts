// The service over HTTP (service-interface.md, section 4), with undici.
// One connection pool per origin (keep-alive), an overall deadline per call, and retries for GETs only.
import type { Pool } from 'undici';
import { ServiceError, httpError } from './errors.js';
import { ProjectSchema, ScriptSchema, unwrapList, type Project, type Script } from './models.js';
import type { z } from 'zod';
import { type Logger, silentLogger } from '../log.js';

export interface ServiceClientOptions {
  baseUrl: string;
  apiKey?: string;
  authHeader: 'x-api-key' | 'bearer';
  timeoutMs: number;
  userAgent?: string;
  logger?: Logger;
  /** GET retries on connection errors, 429, 502, 503 and 504. */
  retries?: number;
  retryBaseDelayMs?: number;
}

export interface CallOptions {
  signal?: AbortSignal;
}

type Method = 'GET' | 'POST' | 'DELETE';
const RETRYABLE_STATUS = new Set([429, 502, 503, 504]);
const MAX_BODY_BYTES = 32 * 1024 * 1024;

export class ServiceClient {
  // undici is loaded on the first request: it is a tenth of a second of start time the local backend never needs.
  private pool?: Promise<Pool>;
  private readonly origin: string;
  private readonly pathPrefix: string;
  private readonly log: Logger;
  private readonly retries: number;
  private readonly retryBaseDelayMs: number;

  constructor(private readonly opts: ServiceClientOptions) {
    const base = new URL(opts.baseUrl);
    this.origin = base.origin;
    this.pathPrefix = base.pathname.replace(/\/+$/, '');
    this.log = opts.logger ?? silentLogger;
    this.retries = opts.retries ?? 3;
    this.retryBaseDelayMs = opts.retryBaseDelayMs ?? 250;
  }

  private getPool(): Promise<Pool> {
    this.pool ??= import('undici').then(
      ({ Pool }) => new Pool(this.origin, { connections: 8, keepAliveTimeout: 30_000, pipelining: 1 }),
    );
    return this.pool;
  }

  get timeoutMs(): number {
    return this.opts.timeoutMs;
  }

  async close(): Promise<void> {
    if (this.pool) await (await this.pool).close();
  }

  // ---- endpoints -------------------------------------------------------------------------------

  async listProjects(limit: number | undefined, call: CallOptions = {}): Promise<Project[]> {
    const body = await this.request('GET', '/projects', { query: { limit }, ...call });
    return this.parseList(body, ProjectSchema, 'GET /projects');
  }

  async getProject(projectId: string, call: CallOptions = {}): Promise<Project> {
    const body = await this.request('GET', `/projects/${encodeURIComponent(projectId)}`, call);
    return this.parseOne(body, ProjectSchema, 'GET /projects/:id');
  }

  async createProject(
    input: { name: string; description: string; prompt_id?: string },
    call: CallOptions = {},
  ): Promise<Project> {
    const body = await this.request('POST', '/projects', { json: input, ...call });
    return this.parseOne(body, ProjectSchema, 'POST /projects');
  }

  async deleteProject(projectId: string, call: CallOptions = {}): Promise<void> {
    await this.request('DELETE', `/projects/${encodeURIComponent(projectId)}`, call);
  }

  async listScripts(projectId: string, limit: number | undefined, call: CallOptions = {}): Promise<Script[]> {
    const body = await this.request('GET', `/projects/${encodeURIComponent(projectId)}/scripts`, {
      query: { limit },
      ...call,
    });
    return this.parseList(body, ScriptSchema, 'GET /projects/:id/scripts');
  }

  /** POST /projects/:id/create-edit. Returns the raw body: the interface doc shows only its `url`. */
  async createEdit(projectId: string, edit: unknown, call: CallOptions = {}): Promise<unknown> {
    return this.request('POST', `/projects/${encodeURIComponent(projectId)}/create-edit`, { json: edit, ...call });
  }

  // ---- parsing ---------------------------------------------------------------------------------

  private parseOne<T extends z.ZodType>(body: unknown, schema: T, what: string): z.infer<T> {
    const parsed = schema.safeParse(body);
    if (!parsed.success) {
      throw new ServiceError({
        kind: 'invalid_response',
        message: `the service's answer to ${what} is not the shape the interface describes (${parsed.error.issues[0]?.path.join('.') || 'body'}: ${parsed.error.issues[0]?.message})`,
      });
    }
    return parsed.data;
  }

  private parseList<T extends z.ZodType>(body: unknown, schema: T, what: string): z.infer<T>[] {
    const list = unwrapList(body);
    if (!list) {
      throw new ServiceError({ kind: 'invalid_response', message: `the service's answer to ${what} is not a list` });
    }
    return list.map((item) => this.parseOne(item, schema, what));
  }

  // ---- transport -------------------------------------------------------------------------------

  private headers(hasBody: boolean): Record<string, string> {
    const h: Record<string, string> = {
      accept: 'application/json',
      'user-agent': this.opts.userAgent ?? 'cutroom',
    };
    if (hasBody) h['content-type'] = 'application/json';
    if (this.opts.apiKey) {
      if (this.opts.authHeader === 'bearer') h.authorization = `Bearer ${this.opts.apiKey}`;
      else h['x-api-key'] = this.opts.apiKey;
    }
    return h;
  }

  private buildPath(path: string, query?: Record<string, string | number | undefined>): string {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) params.set(k, String(v));
    const qs = params.toString();
    return `${this.pathPrefix}${path}${qs ? `?${qs}` : ''}`;
  }

  private async request(
    method: Method,
    path: string,
    opts: { query?: Record<string, string | number | undefined>; json?: unknown; signal?: AbortSignal } = {},
  ): Promise<unknown> {
    const fullPath = this.buildPath(path, opts.query);
    const payload = opts.json === undefined ? undefined : JSON.stringify(opts.json);
    const retryable = method === 'GET';
    // The first call loads undici; that is not the service's time, so the deadline starts after it.
    const pool = await this.getPool();
    const deadline = Date.now() + this.opts.timeoutMs;
    const seconds = formatSeconds(this.opts.timeoutMs);

    for (let attempt = 0; ; attempt++) {
      const remaining = deadline - Date.now();
      if (remaining <= 0) {
        throw new ServiceError({
          kind: 'timeout',
          message: `the service did not answer within ${seconds}`,
          maybeApplied: !retryable,
        });
      }
      const timeout = AbortSignal.timeout(remaining);
      const signal = opts.signal ? AbortSignal.any([timeout, opts.signal]) : timeout;
      let failure: ServiceError;
      let retryAfterMs: number | undefined;
      try {
        const started = performance.now();
        const res = await pool.request({
          method,
          path: fullPath,
          headers: this.headers(payload !== undefined),
          body: payload,
          signal,
          headersTimeout: remaining,
          bodyTimeout: remaining,
        });
        const text = await readText(res.body);
        const contentType = headerValue(res.headers['content-type']);
        this.log.debug(
          `${method} ${this.origin}${fullPath} -> ${res.statusCode} in ${(performance.now() - started).toFixed(1)} ms`,
        );
        if (res.statusCode >= 200 && res.statusCode < 300) {
          if (!text.trim()) return undefined;
          try {
            return JSON.parse(text);
          } catch {
            throw new ServiceError({
              kind: 'invalid_response',
              message: `the service answered ${res.statusCode} with a body that is not JSON`,
            });
          }
        }
        failure = httpError(res.statusCode, text, contentType);
        if (!RETRYABLE_STATUS.has(res.statusCode)) throw failure;
        retryAfterMs = parseRetryAfter(headerValue(res.headers['retry-after']));
      } catch (err) {
        if (err instanceof ServiceError) {
          if (err.kind !== 'http' || !RETRYABLE_STATUS.has(err.status ?? 0)) throw err;
          failure = err;
        } else if (opts.signal?.aborted) {
          throw new ServiceError({ kind: 'cancelled', message: 'the request was cancelled', maybeApplied: !retryable });
        } else if (timeout.aborted || isTimeoutError(err)) {
          throw new ServiceError({
            kind: 'timeout',
            message: `the service did not answer within ${seconds}`,
            maybeApplied: !retryable,
          });
        } else {
          const code = (err as { code?: string }).code ?? (err as Error).message;
          failure = new ServiceError({
            kind: 'network',
            message: `could not reach the service at ${this.origin} (${code}); check VJ_API_URL and the network`,
            maybeApplied: !retryable && code !== 'ECONNREFUSED' && code !== 'ENOTFOUND',
          });
        }
      }
      if (!retryable || attempt >= this.retries) throw failure;
      const delay = retryAfterMs ?? jitteredBackoff(this.retryBaseDelayMs, attempt);
      if (Date.now() + delay >= deadline) throw failure;
      this.log.debug(`retrying ${method} ${fullPath} in ${delay} ms after: ${failure.message}`);
      await sleep(delay, opts.signal);
    }
  }
}

function headerValue(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

async function readText(body: AsyncIterable<Buffer> & { text(): Promise<string> }): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES)
      throw new ServiceError({ kind: 'invalid_response', message: 'the service sent a body larger than 32 MiB' });
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function isTimeoutError(err: unknown): boolean {
  const e = err as { name?: string; code?: string };
  return e?.name === 'TimeoutError' || e?.code === 'UND_ERR_HEADERS_TIMEOUT' || e?.code === 'UND_ERR_BODY_TIMEOUT';
}

/** Retry-After in seconds or as an HTTP date; capped so a hostile value cannot stall us. */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value.trim())) return Math.min(Number(value) * 1000, 60_000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.min(Math.max(0, at - now), 60_000);
}

/** Full jitter: a random delay in [base*2^n / 2, base*2^n]. */
export function jitteredBackoff(baseMs: number, attempt: number, random = Math.random): number {
  const cap = baseMs * 2 ** attempt;
  return Math.round(cap / 2 + (random() * cap) / 2);
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new ServiceError({ kind: 'cancelled', message: 'the request was cancelled' }));
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(new ServiceError({ kind: 'cancelled', message: 'the request was cancelled' }));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export function formatSeconds(ms: number): string {
  const s = ms / 1000;
  return `${Number.isInteger(s) ? s : s.toFixed(1)} s`;
}
