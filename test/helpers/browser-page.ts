// What the tests that drive Debian's chromium share: one test/browser/*.ts entry bundled for the browser and served
// from 127.0.0.1 under a bare HTML page, and chromium found and launched headless (as root, so without its sandbox).
// A machine with no chromium leaves CHROMIUM undefined; each test says what it does then.
import { statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { build } from 'esbuild';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
});

export interface ServedPage {
  /** http://127.0.0.1:<port>/, the page that loads the bundle. */
  url: string;
  port: number;
  close(): void;
}

/**
 * Serves test/browser/<entry> bundled at `script` under a page titled `title` at /; the browser's own icon request
 * is answered empty, anything else 404.
 */
export async function servePage(entry: string, script: string, title: string): Promise<ServedPage> {
  const bundle = await build({
    entryPoints: [join(import.meta.dirname, '../browser', entry)],
    bundle: true,
    write: false,
    format: 'iife',
    platform: 'browser',
    target: ['es2020'],
  });
  const js = bundle.outputFiles[0]!.text;
  const html = `<!doctype html><html><head><title>${title}</title></head><body><script src="${script}"></script></body></html>`;
  const server: Server = createServer((req, res) => {
    if (req.url === script) return res.writeHead(200, { 'content-type': 'text/javascript' }).end(js);
    if (req.url === '/') return res.writeHead(200, { 'content-type': 'text/html' }).end(html);
    if (req.url === '/favicon.ico') return res.writeHead(204).end();
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return { url: `http://127.0.0.1:${port}/`, port, close: () => server.close() };
}

/** Chromium headless with nothing of its own on the network; `extra` adds flags (host rules, autoplay). */
export function launchChromium(extra: string[] = []): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      ...extra,
    ],
  });
}
