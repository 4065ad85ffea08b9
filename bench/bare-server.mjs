// The SDK's floor: a server with one tool that answers at once, served over stdio or (with --http) over Streamable
// HTTP through the same kind of node:http-to-fetch bridge cutroom uses. What HTTP costs this server is what the SDK
// and the machine cost; cutroom's own share is what it adds beyond that.
import { createServer } from 'node:http';
import { McpServer, createMcpHandler } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { z } from 'zod';

const Input = z.object({ limit: z.number().int().optional() });
const make = () => {
  const server = new McpServer({ name: 'bare', version: '1.0.0' });
  server.registerTool('list_projects', { inputSchema: Input }, async () => ({
    content: [{ type: 'text', text: 'no projects' }],
  }));
  return server;
};

if (!process.argv.includes('--http')) {
  serveStdio(make);
} else {
  const handler = createMcpHandler(make);
  const http = createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const body = Buffer.concat(chunks);
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers.set(k, v);
    const r = await handler.fetch(
      new Request(`http://${req.headers.host}${req.url}`, { method: req.method, headers }),
      body.length ? { parsedBody: JSON.parse(body) } : {},
    );
    res.writeHead(r.status, Object.fromEntries(r.headers));
    res.end(Buffer.from(await r.arrayBuffer()));
  });
  http.listen(0, '127.0.0.1', () => process.stderr.write(`listening on http://127.0.0.1:${http.address().port}/mcp\n`));
  process.on('SIGTERM', () => process.exit(0));
}
