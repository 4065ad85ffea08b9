// Bundles each MCP App view (src/views/NAME.ts with its NAME.html) into one self-contained HTML file,
// dist/views/NAME.html: the script inline, no remote origin, as resources/ serves it under ui://.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const VIEWS = ['preview-view'];
mkdirSync(join(root, 'dist/views'), { recursive: true });
for (const name of VIEWS) {
  const out = await build({
    entryPoints: [join(root, 'src/views', `${name}.ts`)],
    bundle: true,
    write: false,
    format: 'iife',
    platform: 'browser',
    target: ['es2020'],
    minify: true,
    legalComments: 'none',
  });
  // The script sits inside <script>: nothing in it may close that element.
  const script = out.outputFiles[0].text.replace(/<\/(script)/gi, '<\\/$1');
  const html = readFileSync(join(root, 'src/views', `${name}.html`), 'utf8');
  if (!html.includes('/*__VIEW_SCRIPT__*/')) throw new Error(`${name}.html has no /*__VIEW_SCRIPT__*/ slot`);
  writeFileSync(
    join(root, 'dist/views', `${name}.html`),
    html.replace('/*__VIEW_SCRIPT__*/', () => script),
  );
  console.error(`views: ${name}.html, ${(Buffer.byteLength(html) + Buffer.byteLength(script)) >> 10} KiB`);
}
