// The floor rows of bench/mcp.js: a stdio peer that does no work but answer.
//   node bench/mcp-echo.js bare LINE_BYTES   answers each newline-delimited JSON-RPC request with one
//                                           line of about LINE_BYTES bytes (its id copied): the bare
//                                           stdio round trip between two Node processes;
//   node bench/mcp-echo.js min TEXT_CHARS    the least an MCP server over stdio can be for the SDK's client:
//                                           answers initialize (the client's protocol version, tools
//                                           capability) and every tools/call with a fixed text of
//                                           TEXT_CHARS characters, without the SDK: what the SDK client
//                                           alone costs;
//   node bench/mcp-echo.js sdk TEXT_CHARS    an MCP server (the SDK's McpServer over the SDK's own
//                                           serveStdio) whose one tool, run_sparql_query, answers
//                                           every call with a fixed text of TEXT_CHARS characters:
//                                           the MCP SDK's stdio layers with a no-op tool;
//   node bench/mcp-echo.js sdk-http TEXT_CHARS URL QUERY
//                                           the same, but the tool first POSTs QUERY to the SPARQL
//                                           endpoint URL with node:http and a keep-alive agent (as
//                                           run_sparql_query's client does) and reads the answer:
//                                           the SDK's stdio plus the tool's HTTP request from a second
//                                           process, with none of fkgqa's own work.
import { McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import http from 'node:http';
import * as z from 'zod';

const [mode, size] = [process.argv[2], Number(process.argv[3])];

/** Calls `each` with every newline-delimited JSON message on stdin, parsed. */
function eachMessage(each) {
  let buf = '';
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (d) => {
    buf += d;
    for (let i; (i = buf.indexOf('\n')) >= 0;) {
      const m = JSON.parse(buf.slice(0, i));
      buf = buf.slice(i + 1);
      each(m);
    }
  });
}

if (mode === 'bare') {
  const line = JSON.stringify({ jsonrpc: '2.0', id: 0, result: { content: [{ type: 'text', text: 'x'.repeat(Math.max(0, size - 60)) }] } });
  eachMessage((m) => process.stdout.write(line.replace('"id":0', `"id":${JSON.stringify(m.id)}`) + '\n'));
} else if (mode === 'min') {
  const text = 'x'.repeat(size);
  eachMessage((m) => {
    if (m.id === undefined) return;
    const result =
      m.method === 'initialize'
        ? { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'min', version: '1' } }
        : m.method === 'tools/call'
          ? { content: [{ type: 'text', text }] }
          : {};
    process.stdout.write(JSON.stringify({ result, jsonrpc: '2.0', id: m.id }) + '\n');
  });
} else if (mode === 'sdk') {
  const text = 'x'.repeat(size);
  serveStdio(() => {
    const server = new McpServer({ name: 'echo', version: '1' });
    server.registerTool('run_sparql_query', { description: 'answers a fixed text', inputSchema: z.object({ query: z.string().min(1) }) }, async () => ({ content: [{ type: 'text', text }] }));
    return server;
  });
} else if (mode === 'sdk-http') {
  const text = 'x'.repeat(size);
  const [url, query] = process.argv.slice(4);
  const agent = new http.Agent({ keepAlive: true });
  const body = new URLSearchParams({ query }).toString();
  const post = () =>
    new Promise((resolve, reject) => {
      const req = http.request(
        url,
        { method: 'POST', agent, headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/sparql-results+json', 'content-length': Buffer.byteLength(body) } },
        (res) => {
          const chunks = [];
          res.on('data', (c) => chunks.push(c));
          res.on('error', reject);
          res.on('end', () => (res.statusCode === 200 ? resolve(Buffer.concat(chunks).toString()) : reject(new Error(`HTTP ${res.statusCode}`))));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  serveStdio(() => {
    const server = new McpServer({ name: 'echo', version: '1' });
    server.registerTool('run_sparql_query', { description: 'POSTs a fixed query, answers a fixed text', inputSchema: z.object({ query: z.string().min(1) }) }, async () => {
      await post();
      return { content: [{ type: 'text', text }] };
    });
    return server;
  });
} else {
  process.stderr.write('usage: node bench/mcp-echo.js bare LINE_BYTES | min TEXT_CHARS | sdk TEXT_CHARS | sdk-http TEXT_CHARS URL QUERY\n');
  process.exit(2);
}
