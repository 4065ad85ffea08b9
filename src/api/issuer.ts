// An identity provider's public documents over HTTP with undici (the only room that calls out): its metadata
// (RFC 8414, or OpenID Connect Discovery) and its key set (JWKS), each a GET of JSON with a deadline and a size cap,
// no redirect followed (undici's request follows none) and nothing sent but Accept. auth/ reads them to check the tokens the provider issues.

/** The most a metadata document or key set may be. */
const MAX_BYTES = 1024 * 1024;

export class IssuerFetchError extends Error {
  override name = 'IssuerFetchError';
}

/** The JSON object at `url` (a plain GET); throws IssuerFetchError with one line that names the URL and what failed. */
export async function fetchIssuerJson(url: string, timeoutMs = 10_000): Promise<Record<string, unknown>> {
  const { request } = await import('undici');
  let res: Awaited<ReturnType<typeof request>>;
  try {
    res = await request(url, {
      method: 'GET',
      headers: { accept: 'application/json' },
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
  } catch (err) {
    throw new IssuerFetchError(`GET ${url} failed: ${(err as Error).message}`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res.body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BYTES) {
      res.body.destroy();
      throw new IssuerFetchError(`GET ${url}: the answer is over ${MAX_BYTES} bytes`);
    }
    chunks.push(chunk);
  }
  if (res.statusCode !== 200) throw new IssuerFetchError(`GET ${url} answered ${res.statusCode}`);
  try {
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
    if (body && typeof body === 'object' && !Array.isArray(body)) return body as Record<string, unknown>;
  } catch {
    // said below
  }
  throw new IssuerFetchError(`GET ${url}: the answer is not a JSON object`);
}

/**
 * The provider's metadata: RFC 8414's well-known URL first, then OpenID Connect Discovery's (path inserted, then
 * appended), as the MCP authorization specification orders them; the first that answers with its own issuer.
 */
export async function fetchIssuerMetadata(issuer: string, timeoutMs?: number): Promise<Record<string, unknown>> {
  const url = new URL(issuer);
  const path = url.pathname.replace(/\/+$/, '');
  const candidates = [
    `${url.origin}/.well-known/oauth-authorization-server${path}`,
    `${url.origin}/.well-known/openid-configuration${path}`,
    ...(path ? [`${url.origin}${path}/.well-known/openid-configuration`] : []),
  ];
  const failures: string[] = [];
  for (const candidate of candidates) {
    try {
      const metadata = await fetchIssuerJson(candidate, timeoutMs);
      if (metadata.issuer === issuer) return metadata;
      failures.push(`${candidate} names another issuer (${String(metadata.issuer)})`);
    } catch (err) {
      failures.push((err as Error).message);
    }
  }
  throw new IssuerFetchError(`no metadata for the issuer ${issuer}: ${failures.join('; ')}`);
}
