// ui://cutroom/preview: the preview view, an MCP App (io.modelcontextprotocol/ui) that preview_edit names in its
// _meta.ui.resourceUri. Its HTML is built from src/views/ (scripts/build-views.mjs) into one
// self-contained file; it needs nothing beyond the specification's default CSP (its video arrives as a data: URL).
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

export function register(server: McpServer, _deps: ToolDeps): void {
  server.registerResource(
    'preview-view',
    PREVIEW_VIEW_URI,
    {
      title: 'Preview player',
      description:
        "A view for MCP Apps hosts: plays a preview_edit result's video over its timeline (cuts with timecodes, loudness and flags; the overlays); clicking a cut seeks there and tells the model.",
      mimeType: VIEW_MIME_TYPE,
      _meta: { ui: { prefersBorder: true } },
    },
    async (uri) => ({
      contents: [
        { uri: uri.href, mimeType: VIEW_MIME_TYPE, text: await previewHtml(), _meta: { ui: { prefersBorder: true } } },
      ],
    }),
  );
}
