// Tool results as the session's protocol version defines them. Tools build results for the newest version;
// older sessions get only the content types their version has (the TypeScript SDK 1.10 client throws on a
// resource_link). Done once for every tool, at the SDK's seam for projecting a tools/call result.
import type { CallToolResult, McpServer } from '@modelcontextprotocol/server';

type Content = CallToolResult['content'][number];

// Protocol versions are dates, so they compare as strings.
/** resource_link content arrived in 2025-06-18. */
const RESOURCE_LINK_SINCE = '2025-06-18';
/** audio content arrived in 2025-03-26. */
const AUDIO_SINCE = '2025-03-26';

function linkAsText(c: Extract<Content, { type: 'resource_link' }>): Content {
  const about = [c.title ?? c.name, c.mimeType ? `(${c.mimeType})` : '', c.description ? `— ${c.description}` : '']
    .filter(Boolean)
    .join(' ');
  return { type: 'text', text: `Resource ${c.uri}${about ? `: ${about}` : ''}; read it with resources/read.` };
}

/**
 * The result with every content item the version does not define turned into text saying what it was.
 * structuredContent (from 2025-06-18 too) is kept as is: clients of older versions ignore fields they do
 * not know, and the same data is in the text already. An unknown (absent) version changes nothing.
 */
export function contentForVersion(result: CallToolResult, version: string | undefined): CallToolResult {
  if (!version || version >= RESOURCE_LINK_SINCE || !Array.isArray(result.content)) return result;
  const content = result.content.map((c): Content => {
    if (c.type === 'resource_link') return linkAsText(c);
    if (c.type === 'audio' && version < AUDIO_SINCE)
      return {
        type: 'text',
        text: `(An audio item, ${c.mimeType}, was left out: this protocol version has no audio content.)`,
      };
    return c;
  });
  return { ...result, content };
}

/**
 * Routes every tools/call result of this server through contentForVersion, with the version the session
 * negotiated. McpServer's tools/call handler passes each result through Server.projectCallToolResult (the
 * SDK's one place for era-specific shaping of tool results), so wrapping it covers every tool at once. `declared`
 * is the version when no handshake set one (a 2025-era HTTP request's MCP-Protocol-Version).
 */
export function adaptToolResultsToProtocol(server: McpServer, declared?: string): void {
  const inner = server.server;
  const project = inner.projectCallToolResult.bind(inner);
  // Over stateless HTTP an instance serves one request and saw no handshake: the request's declared version stands.
  inner.projectCallToolResult = (result, schema) =>
    project(contentForVersion(result, inner.getNegotiatedProtocolVersion() ?? declared), schema);
}
