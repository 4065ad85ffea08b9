// App-only tools (MCP Apps, _meta.ui.visibility ["app"]: called by a view through its host, never by the model) are
// left out of tools/list for a client known not to declare the MCP Apps extension
// (capabilities.extensions["io.modelcontextprotocol/ui"]): tools/list is paid in every chat, and a client without
// views has no use for them. A client whose capabilities are unknown (a 2025 request over stateless HTTP: the
// handshake that declared them was answered by another instance) is shown them, since a host that declared MCP Apps
// lets its view call only the tools it saw marked for apps (hosts keep them from the model). They stay callable by
// anyone (a host relays its view's calls).
import { getUiCapability } from '@modelcontextprotocol/ext-apps/server';
import type { McpServer } from '@modelcontextprotocol/server';

type Listed = { tools: { _meta?: { ui?: { visibility?: string[] } } }[] };
type Handler = (request: unknown, ctx: unknown) => unknown;

const appOnly = (t: Listed['tools'][number]) => {
  const v = t._meta?.ui?.visibility;
  return Array.isArray(v) && v.length > 0 && !v.includes('model');
};

/**
 * The client's capabilities for this request: its handshake's, or (2026-07-28 requests) the request's envelope;
 * undefined when neither is known.
 */
function capabilitiesOf(server: McpServer, ctx: unknown): Parameters<typeof getUiCapability>[0] {
  const envelope = (ctx as { mcpReq?: { envelope?: Record<string, unknown> } } | undefined)?.mcpReq?.envelope;
  const fromEnvelope = envelope && Object.entries(envelope).find(([k]) => /clientCapabilities$/i.test(k))?.[1];
  return (fromEnvelope as Parameters<typeof getUiCapability>[0]) ?? server.server.getClientCapabilities();
}

/** From now on, this server's tools/list leaves app-only tools out for clients known not to declare MCP Apps. */
export function listAppOnlyToolsToAppHosts(server: McpServer): void {
  const inner = server.server as unknown as { setRequestHandler: (method: string, ...rest: unknown[]) => unknown };
  const set = inner.setRequestHandler.bind(inner);
  inner.setRequestHandler = (method: string, ...rest: unknown[]) => {
    const handler = rest.at(-1) as Handler;
    if (method !== 'tools/list' || typeof handler !== 'function') return set(method, ...rest);
    const filtered: Handler = async (request, ctx) => {
      const listed = (await handler(request, ctx)) as Listed;
      const capabilities = capabilitiesOf(server, ctx);
      if (!capabilities || getUiCapability(capabilities)) return listed;
      return { ...listed, tools: listed.tools.filter((t) => !appOnly(t)) };
    };
    return set(method, ...rest.slice(0, -1), filtered);
  };
}
