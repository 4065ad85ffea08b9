// One error type for every way a call to the service can fail, carrying a one-line message a model can act on.

export type ServiceErrorKind =
  | 'http' // the service answered with a non-2xx status
  | 'timeout' // no complete answer within the configured time
  | 'network' // connection refused, reset, DNS failure...
  | 'invalid_response' // 2xx, but not the shape the interface doc describes
  | 'cancelled'; // the caller aborted

export class ServiceError extends Error {
  override name = 'ServiceError';
  readonly kind: ServiceErrorKind;
  readonly status?: number;
  /** The service's own message, reduced to one line of plain text. */
  readonly detail?: string;
  /** Whether the request may have reached the service (matters for POSTs that must not be resent). */
  readonly maybeApplied: boolean;

  constructor(opts: {
    kind: ServiceErrorKind;
    message: string;
    status?: number;
    detail?: string;
    maybeApplied?: boolean;
  }) {
    super(opts.message);
    this.kind = opts.kind;
    this.status = opts.status;
    this.detail = opts.detail;
    this.maybeApplied = opts.maybeApplied ?? false;
  }
}

const MAX_DETAIL = 300;

function oneLine(s: string): string {
  const flat = s.replace(/\s+/g, ' ').trim();
  return flat.length > MAX_DETAIL ? `${flat.slice(0, MAX_DETAIL - 1)}…` : flat;
}

/** Renders FastAPI-style validation items ({loc, msg}) as "body.name: field required". */
function formatDetailList(items: unknown[]): string {
  return items
    .map((item) => {
      if (item && typeof item === 'object') {
        const { loc, msg } = item as { loc?: unknown; msg?: unknown };
        const where = Array.isArray(loc) ? loc.join('.') : undefined;
        const what = typeof msg === 'string' ? msg : JSON.stringify(item);
        return where ? `${where}: ${what}` : what;
      }
      return String(item);
    })
    .join('; ');
}

/**
 * Extracts the service's message from an error body, whatever it is: JSON with `detail` (string or a
 * FastAPI-style list), JSON with `message`/`error`, plain text, or HTML (reduced to its title or text).
 */
export function describeErrorBody(body: string, contentType = ''): string | undefined {
  const trimmed = body.trim();
  if (!trimmed) return undefined;
  if (/json/i.test(contentType) || /^[[{]/.test(trimmed)) {
    try {
      const parsed: unknown = JSON.parse(trimmed);
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) {
        const obj = parsed as Record<string, unknown>;
        for (const key of ['detail', 'message', 'error', 'msg']) {
          const v = obj[key];
          if (typeof v === 'string' && v.trim()) return oneLine(v);
          if (Array.isArray(v) && v.length) return oneLine(formatDetailList(v));
          if (v && typeof v === 'object') return oneLine(JSON.stringify(v));
        }
      }
      if (Array.isArray(parsed) && parsed.length) return oneLine(formatDetailList(parsed));
      return oneLine(trimmed);
    } catch {
      // not JSON after all; fall through
    }
  }
  if (/html/i.test(contentType) || /^<(!doctype|html|\?xml)/i.test(trimmed)) {
    const title = /<title[^>]*>([^<]*)<\/title>/i.exec(trimmed)?.[1];
    const h1 = /<h1[^>]*>([^<]*)<\/h1>/i.exec(trimmed)?.[1];
    const picked = (title ?? h1 ?? '').trim();
    if (picked) return oneLine(picked);
    const textOnly = trimmed
      .replace(/<script[\s\S]*?<\/script>|<style[\s\S]*?<\/style>/gi, ' ')
      .replace(/<[^>]+>/g, ' ');
    return oneLine(textOnly) || undefined;
  }
  return oneLine(trimmed);
}

const STATUS_TEXT: Record<number, string> = {
  400: 'bad request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not found',
  409: 'conflict',
  413: 'payload too large',
  422: 'unprocessable entity',
  429: 'too many requests',
  500: 'internal server error',
  502: 'bad gateway',
  503: 'service unavailable',
  504: 'gateway timeout',
};

export function httpError(status: number, body: string, contentType: string | undefined): ServiceError {
  const detail = describeErrorBody(body, contentType);
  const label = STATUS_TEXT[status] ?? 'error';
  return new ServiceError({
    kind: 'http',
    status,
    detail,
    message: `the service answered ${status} (${label})${detail ? `: ${detail}` : ''}`,
    maybeApplied: status >= 500,
  });
}
