// The MCP App views tools name in their results' host rendering (io.modelcontextprotocol/ui): a host that supports
// Apps shows the view with the result; any other host sees the result as it always was.
export const PREVIEW_VIEW_URI = 'ui://cutroom/preview';
export const VIEW_MIME_TYPE = 'text/html;profile=mcp-app';
/** The MCP Apps extension's key in capabilities.extensions: clients declare it, and so does cutroom (it serves views). */
export const UI_EXTENSION = 'io.modelcontextprotocol/ui';

/** A tool's _meta naming its view (and the older flat key some hosts still read). */
export const viewMeta = (uri: string) => ({ ui: { resourceUri: uri }, 'ui/resourceUri': uri });
