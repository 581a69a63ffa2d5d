// node bench/mcp-profile.js DIR — reads the CPU profiles that `node bench/mcp.js --profile DIR` wrote
// (DIR/<server>/*.cpuprofile, main thread = the first file) and DIR/window.json (the timed rounds),
// and prints for each stdio server the main thread's busy time per call within the timed rounds,
// each sample given to the nearest frame (leaf to root) that belongs to one of: the MCP SDK (with
// zod), fkgqa's stdio transport, call log, HTTP request (common/http-client.ts, federation/client.ts), the rest of
// fkgqa's tool, the echo's tool (bench/mcp-echo.js), or else Node alone (event loop, stream reads).
// Sampled times include the profiler's own cost and the time a thread waited in a system call, so
// compare servers of one run rather than reading the figures as CPU (bench/mcp.js prints that).
import fs from 'node:fs';
import path from 'node:path';

const dir = process.argv[2];
if (!dir) {
  process.stderr.write('usage: node bench/mcp-profile.js DIR (the --profile folder of bench/mcp.js)\n');
  process.exit(2);
}
const window = JSON.parse(fs.readFileSync(path.join(dir, 'window.json'), 'utf8'));

/** The owner of a frame by its script URL, or null (Node's own code: look further up the stack). */
function owner(url) {
  if (/node_modules\/(@modelcontextprotocol|zod)\//.test(url)) return 'MCP SDK (+ zod)';
  if (/\/dist\/mcp\/transport\.js$/.test(url)) return 'fkgqa: stdio transport (transport.ts)';
  if (/\/dist\/mcp\/call-log\.js$/.test(url)) return 'fkgqa: call log';
  if (/\/dist\/federation\/(http|client)\.js$/.test(url)) return 'fkgqa: HTTP request (client.ts, http.ts)';
  if (/\/dist\//.test(url) && !/node_modules/.test(url)) return "fkgqa: the tool's other work (run-query, answer check, …)";
  if (/mcp-echo\.js$/.test(url)) return "echo's tool";
  return null;
}

for (const server of fs
  .readdirSync(dir)
  .filter((d) => fs.statSync(path.join(dir, d)).isDirectory())
  .sort()) {
  const files = fs
    .readdirSync(path.join(dir, server))
    .filter((f) => f.endsWith('.cpuprofile'))
    .sort();
  if (!files.length) continue;
  const p = JSON.parse(fs.readFileSync(path.join(dir, server, files[0]), 'utf8'));
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const acc = new Map();
  let t = p.startTime;
  for (let i = 0; i < p.samples.length; i++) {
    t += p.timeDeltas[i];
    const dt = p.timeDeltas[i + 1] ?? 0;
    if (t < window.t0 || t > window.t1) continue;
    const leaf = byId.get(p.samples[i]);
    if (leaf.callFrame.functionName === '(idle)') continue;
    let o = leaf.callFrame.functionName === '(garbage collector)' ? 'garbage collector' : null;
    for (let id = leaf.id; !o && id !== undefined; id = parent.get(id)) o = owner(byId.get(id).callFrame.url);
    o ??= 'Node alone (event loop, stream reads, timers)';
    acc.set(o, (acc.get(o) ?? 0) + dt);
  }
  const total = [...acc.values()].reduce((a, b) => a + b, 0);
  console.log(`${server}: main thread busy ${(total / window.n).toFixed(0)} µs per call (sampled, ${window.n} calls)`);
  for (const [k, v] of [...acc].sort((a, b) => b[1] - a[1])) console.log(`  ${(v / window.n).toFixed(0).padStart(6)} µs ${((100 * v) / total).toFixed(0).padStart(3)} %  ${k}`);
}
