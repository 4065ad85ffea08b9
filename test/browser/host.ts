// A minimal MCP Apps host for the view tests, bundled by esbuild at test time and run in Debian's chromium: it
// embeds a view in a sandboxed iframe (scripts only, an opaque origin) under the specification's default CSP, or the
// one its resource declares (`_meta.ui.csp`: its connectDomains become connect-src, nothing else widened), talks
// to it with the ext-apps AppBridge over postMessage, relays its tools/call and resources/read to the real server
// (functions the test exposes), records what it asks of the host, and hands it a tool result.
import { AppBridge, PostMessageTransport } from '@modelcontextprotocol/ext-apps/app-bridge';

/** The CSP a host must use when the view's resource declares none (apps.mdx, 2026-01-26). */
export const DEFAULT_CSP =
  "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; media-src 'self' data:; connect-src 'none';";

/** The CSP for a view whose resource declares `csp` (McpUiResourceCsp): the default, its connect-src widened. */
export function cspFor(csp?: { connectDomains?: string[] }): string {
  const domains = (csp?.connectDomains ?? []).filter((d) => /^https?:\/\/[\w.:[\]-]+$/.test(d));
  return domains.length ? DEFAULT_CSP.replace("connect-src 'none'", `connect-src ${domains.join(' ')}`) : DEFAULT_CSP;
}

declare global {
  interface Window {
    relayCallTool(params: unknown): Promise<unknown>;
    relayReadResource(params: unknown): Promise<unknown>;
    /**
     * Starts the view in a frame `width` px wide (760 by default); with `toolInput`, the tool's arguments go first
     * (the call starting), and the result only when given.
     */
    startHost(
      html: string,
      toolResult: unknown,
      theme: 'light' | 'dark',
      toolInput?: Record<string, unknown>,
      width?: number,
      csp?: { connectDomains?: string[] },
    ): Promise<void>;
    sendToolResult(result: unknown): Promise<void>;
    hostLog: {
      modelContext: unknown[];
      sizes: { width?: number; height?: number }[];
      calls: string[];
      initialized: boolean;
    };
  }
}

window.hostLog = { modelContext: [], sizes: [], calls: [], initialized: false };

window.startHost = async (html, toolResult, theme, toolInput, width = 760, csp) => {
  const iframe = document.createElement('iframe');
  iframe.setAttribute('sandbox', 'allow-scripts');
  iframe.style.width = `${width}px`;
  iframe.style.border = '0';
  document.body.append(iframe);
  const bridge = new AppBridge(
    null,
    { name: 'cutroom-test-host', version: '1.0.0' },
    { serverTools: {}, serverResources: {}, updateModelContext: { text: {}, structuredContent: {} } },
    { hostContext: { theme, displayMode: 'inline', containerDimensions: { width, maxHeight: 2000 } } },
  );
  bridge.oncalltool = async (params) => {
    window.hostLog.calls.push(`tools/call ${params.name}`);
    return (await window.relayCallTool(params)) as never;
  };
  bridge.onreadresource = async (params) => {
    window.hostLog.calls.push(`resources/read ${params.uri}`);
    return (await window.relayReadResource(params)) as never;
  };
  bridge.onupdatemodelcontext = async (params) => {
    window.hostLog.modelContext.push(params);
    return {};
  };
  bridge.onsizechange = (params) => {
    window.hostLog.sizes.push(params);
    if (params.height) iframe.style.height = `${params.height}px`;
  };
  const initialized = new Promise<void>((resolve) => {
    bridge.oninitialized = () => {
      window.hostLog.initialized = true;
      resolve();
    };
  });
  // Listening before the view loads: it says ui/initialize as soon as its script runs.
  await bridge.connect(new PostMessageTransport(iframe.contentWindow!, iframe.contentWindow!));
  iframe.srcdoc = html.replace(/<head>/i, `<head><meta http-equiv="Content-Security-Policy" content="${cspFor(csp)}">`);
  await initialized;
  window.sendToolResult = (result) => bridge.sendToolResult(result as never);
  if (toolInput) await bridge.sendToolInput({ arguments: toolInput });
  if (toolResult) await bridge.sendToolResult(toolResult as never);
};
