// ui://cutroom/preview: the preview view, an MCP App (io.modelcontextprotocol/ui) that preview_edit names in its
// _meta.ui.resourceUri. Its HTML is built from src/views/ (scripts/build-views.mjs) into one
// self-contained file; its video arrives as a data: URL, which the specification's default CSP allows. Where the server
// takes uploads (over HTTP), the HTML is marked so that the view offers its drop zone, and its CSP's connectDomains
// name the one origin the view sends files to (the upload links'); elsewhere it declares no CSP (no network at all).
import { readFile } from 'node:fs/promises';
import type { McpServer } from '@modelcontextprotocol/server';
import type { ToolDeps } from '../workflow/deps.js';
import { PREVIEW_VIEW_URI, VIEW_MIME_TYPE } from '../workflow/views.js';

let html: Promise<string> | undefined;
const previewHtml = () =>
  (html ??= readFile(new URL('../views/preview-view.html', import.meta.url), 'utf8').catch((err: unknown) => {
    html = undefined;
    throw err;
  }));

/** Marks the HTML for a server that takes uploads: the view's drop zone is offered (views/drop-zone.ts). */
const withUploads = (page: string) => page.replace(/<head>/i, '<head><meta name="cutroom-uploads" content="offered">');

export function register(server: McpServer, deps: ToolDeps): void {
  const origin = deps.uploads?.origin;
  const ui = { prefersBorder: true, ...(origin ? { csp: { connectDomains: [origin] } } : {}) };
  server.registerResource(
    'preview-view',
    PREVIEW_VIEW_URI,
    {
      title: 'Preview player',
      description:
        "A view for MCP Apps hosts: plays a preview_edit result's video over its timeline (cuts with timecodes, loudness and flags; the overlays); clicking a cut seeks there and tells the model.",
      mimeType: VIEW_MIME_TYPE,
      _meta: { ui },
    },
    async (uri) => {
      const page = await previewHtml();
      return {
        contents: [{ uri: uri.href, mimeType: VIEW_MIME_TYPE, text: origin ? withUploads(page) : page, _meta: { ui } }],
      };
    },
  );
}
