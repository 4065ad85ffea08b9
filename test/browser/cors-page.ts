// A page that calls cutroom directly from the browser, as a browser MCP host does (the ext-apps basic-host connects
// with the SDK's Streamable HTTP client from its page): bundled by esbuild at test time, served by the test from a
// loopback HTTP server and run in Debian's chromium. `rawCalls` uses fetch alone (initialize with the bearer token,
// the session id read from the answer's headers when the server gives one, tools/list, a tools/call); `sdkCalls` uses
// the SDK's client; `hostCalls` does what the ext-apps example host (basic-host) does on connecting, with no
// credentials at all. Each returns what the page could see, or the error the browser raised.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

declare global {
  interface Window {
    rawCalls(url: string, token: string): Promise<RawOutcome>;
    sdkCalls(url: string, token: string, name: string): Promise<SdkOutcome>;
    hostCalls(url: string): Promise<HostOutcome>;
  }
}

export interface HostOutcome {
  error?: string;
  server?: string;
  tools?: string[];
  /** The tool that names a view, that view's URI and the MIME type its resource came with. */
  view?: { tool: string; uri: string; mimeType?: string; bytes: number };
  created?: string;
}

export interface RawOutcome {
  error?: string;
  /** An answer without the token: its status and the challenge the page could read (exposed), or null. */
  unauthorized?: { status: number; challenge: string | null };
  initialize?: { status: number; server: string; sessionId: string | null; protocolVersion: string };
  tools?: string[];
  call?: { isError: boolean; projects: unknown };
}
export interface SdkOutcome {
  error?: string;
  server?: string;
  tools?: number;
  created?: string;
  listed?: string[];
}

/** The JSON-RPC message in an answer: JSON, or the first `data:` event of an SSE stream. */
async function message(r: Response): Promise<{ result?: Record<string, unknown>; error?: unknown }> {
  const text = await r.text();
  if (/^application\/json/.test(r.headers.get('content-type') ?? '')) return JSON.parse(text);
  const data = text.split('\n').find((l) => l.startsWith('data: '));
  if (!data) throw new Error(`no event in the answer (${r.status}): ${text.slice(0, 200)}`);
  return JSON.parse(data.slice(6));
}

window.rawCalls = async (url, token) => {
  const out: RawOutcome = {};
  const base = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  try {
    const init = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'cors-page', version: '1' } },
    };
    const denied = await fetch(url, { method: 'POST', headers: base, body: JSON.stringify(init) });
    out.unauthorized = { status: denied.status, challenge: denied.headers.get('www-authenticate') };
    const headers: Record<string, string> = { ...base, authorization: `Bearer ${token}` };
    const r1 = await fetch(url, { method: 'POST', headers, body: JSON.stringify(init) });
    const m1 = await message(r1);
    const result = m1.result as { protocolVersion: string; serverInfo: { name: string } };
    const sessionId = r1.headers.get('mcp-session-id');
    out.initialize = {
      status: r1.status,
      server: result.serverInfo.name,
      sessionId,
      protocolVersion: result.protocolVersion,
    };
    headers['mcp-protocol-version'] = result.protocolVersion;
    if (sessionId) headers['mcp-session-id'] = sessionId;
    await fetch(url, {
      method: 'POST',
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    });
    const m2 = await message(
      await fetch(url, {
        method: 'POST',
        headers,
        body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }),
      }),
    );
    out.tools = (m2.result!.tools as { name: string }[]).map((t) => t.name);
    const m3 = await message(
      await fetch(url, {
        method: 'POST',
        headers,
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 3,
          method: 'tools/call',
          params: { name: 'list_projects', arguments: {} },
        }),
      }),
    );
    const call = m3.result as { isError?: boolean; structuredContent?: { projects?: unknown } };
    out.call = { isError: !!call.isError, projects: call.structuredContent?.projects };
  } catch (err) {
    out.error = `${(err as Error).name}: ${(err as Error).message}`;
  }
  return out;
};

window.sdkCalls = async (url, token, name) => {
  const out: SdkOutcome = {};
  const client = new Client({ name: 'cors-page-sdk', version: '1' });
  try {
    await client.connect(
      new StreamableHTTPClientTransport(new URL(url), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    out.server = client.getServerVersion()?.name;
    out.tools = (await client.listTools()).tools.length;
    const made = (await client.callTool({
      name: 'create_project',
      arguments: { name, description: 'made by a page' },
    })) as { isError?: boolean; structuredContent?: { project?: { name: string } } };
    if (made.isError) throw new Error(`create_project failed: ${JSON.stringify(made)}`);
    out.created = made.structuredContent?.project?.name;
    const listed = (await client.callTool({ name: 'list_projects', arguments: {} })) as {
      structuredContent?: { projects?: { name: string }[] };
    };
    out.listed = (listed.structuredContent?.projects ?? []).map((p) => p.name);
  } catch (err) {
    out.error = `${(err as Error).name}: ${(err as Error).message}`;
  } finally {
    await client.close().catch(() => {});
  }
  return out;
};

// As basic-host connects (its connectToServer, callTool and getUiResource): the SDK's client on the bare URL, no
// header added; the tools listed; a tool's view read by the URI its _meta.ui names; a call.
window.hostCalls = async (url) => {
  const out: HostOutcome = {};
  const client = new Client({ name: 'MCP Apps Host', version: '1.0.0' });
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    out.server = client.getServerVersion()?.name;
    const { tools } = await client.listTools();
    out.tools = tools.map((t) => t.name);
    const withView = tools.find((t) => typeof (t._meta?.ui as { resourceUri?: unknown })?.resourceUri === 'string');
    if (withView) {
      const uri = (withView._meta!.ui as { resourceUri: string }).resourceUri;
      const read = await client.readResource({ uri });
      const item = read.contents[0] as { mimeType?: string; text?: string; blob?: string };
      out.view = { tool: withView.name, uri, mimeType: item.mimeType, bytes: (item.text ?? item.blob ?? '').length };
    }
    const made = (await client.callTool({
      name: 'create_project',
      arguments: { name: 'from the example host', description: 'made by a page' },
    })) as { isError?: boolean; structuredContent?: { project?: { name: string } } };
    if (made.isError) throw new Error(`create_project failed: ${JSON.stringify(made)}`);
    out.created = made.structuredContent?.project?.name;
  } catch (err) {
    out.error = `${(err as Error).name}: ${(err as Error).message}`;
  } finally {
    await client.close().catch(() => {});
  }
  return out;
};
