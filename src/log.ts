// Logging to stderr only: stdout belongs to the MCP protocol.
// Every line passes through redact(), so neither the API key nor a signed URL's query reaches a log.

export type LogLevel = 'error' | 'warn' | 'info' | 'debug';
const ORDER: Record<LogLevel, number> = { error: 0, warn: 1, info: 2, debug: 3 };

const secrets = new Set<string>();

/** Registers a value (the API key, the HTTP token) that must never appear in any output. */
export function addSecret(value: string | undefined): void {
  if (value && value.length >= 4) secrets.add(value);
}

const URL_WITH_QUERY = /\b((?:https?|file):\/\/[^\s?#"'<>]+)\?[^\s"'<>]*/gi;

/** Removes registered secrets and the query strings of URLs (signatures, expiry, access key ids). */
export function redact(text: string): string {
  let out = text.replace(URL_WITH_QUERY, '$1?[redacted]');
  for (const s of secrets) out = out.split(s).join('[redacted]');
  return out;
}

export interface Logger {
  error(msg: string): void;
  warn(msg: string): void;
  info(msg: string): void;
  debug(msg: string): void;
  /** Written whatever the level: the line an operator cannot do without (where a server listens). */
  announce(msg: string): void;
  /** Takes out of a text what must not be shown beyond the registered secrets (a hosted caller's own key). */
  hide?(text: string): string;
  /** What a hosted caller may be shown of a text: hide's, and no path of the server's own folders. */
  outward?(text: string): string;
}

export function createLogger(
  level: LogLevel = 'info',
  write: (line: string) => void = (l) => process.stderr.write(l),
): Logger {
  const at = (lvl: LogLevel) => (msg: string) => {
    if (ORDER[lvl] > ORDER[level]) return;
    write(`cutroom ${lvl}: ${redact(msg)}\n`);
  };
  const announce = (msg: string) => write(`cutroom: ${redact(msg)}\n`);
  return { error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug'), announce };
}

export const silentLogger: Logger = { error() {}, warn() {}, info() {}, debug() {}, announce() {} };
