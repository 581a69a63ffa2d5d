// The JSON-RPC envelope check of `fkgqa mcp` (src/mcp/transport.ts) skips the SDK's zod validation
// of a plain tools/call (a measurable share of its CPU): it must accept and refuse exactly what that validation accepts
// and refuses, and word a refusal as before.
import { specTypeSchemas } from '@modelcontextprotocol/server';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkMessage, JSONRPC_ERRORS } from '../src/mcp/transport.js';
import { ROOT, tmpDir } from './helpers.js';

/** Whether the SDK's CallToolRequest schema accepts these params. */
function sdkAccepts(params: unknown): boolean {
  const r = (specTypeSchemas.CallToolRequest as unknown as { '~standard': { validate(v: unknown): { issues?: readonly unknown[] } } })['~standard'].validate({ method: 'tools/call', params });
  return !r.issues?.length;
}

const PARAMS: [string, string][] = [
  ['name and arguments', '{"name":"run_sparql_query","arguments":{"query":"ASK {}"}}'],
  ['name only', '{"name":"run_sparql_query"}'],
  ['empty name', '{"name":""}'],
  ['empty arguments', '{"name":"x","arguments":{}}'],
  ['arguments an array', '{"name":"x","arguments":[]}'],
  ['arguments null', '{"name":"x","arguments":null}'],
  ['arguments a string', '{"name":"x","arguments":"q"}'],
  ['name a number', '{"name":1,"arguments":{}}'],
  ['name missing', '{"arguments":{}}'],
  ['name null', '{"name":null}'],
  ['_meta an object', '{"name":"x","arguments":{},"_meta":{"progressToken":3}}'],
  ['_meta a string', '{"name":"x","_meta":"m"}'],
  ['progressToken an object', '{"name":"x","_meta":{"progressToken":{}}}'],
  ['an unknown key', '{"name":"x","other":1}'],
  ['a key named __proto__', '{"name":"x","__proto__":{"a":1}}'],
];

describe('checkMessage on tools/call params', () => {
  it.each(PARAMS)('%s: accepted exactly when the SDK schema accepts it', (_, params) => {
    const c = checkMessage(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":${params}}`);
    const sdk = sdkAccepts(JSON.parse(params));
    expect(c.ok).toBe(sdk);
    if (!c.ok) {
      const reply = c.reply as { id: unknown; error: { code: number; message: string } };
      expect(reply.id).toBe(9);
      expect(reply.error.code).toBe(JSONRPC_ERRORS.invalidParams);
    }
  });

  it('the plain form passes, and refusals name the field as before', () => {
    expect(checkMessage('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"run_sparql_query","arguments":{"query":"ASK {}"}}}')).toEqual({
      ok: true,
      message: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'run_sparql_query', arguments: { query: 'ASK {}' } } },
    });
    const bad = checkMessage('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":1}}');
    expect(bad.ok).toBe(false);
    expect(bad.ok ? null : (bad.reply as { error: { message: string } }).error.message).toBe('Invalid params: params.name: Invalid input: expected string, received number');
    const arr = checkMessage('{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x","arguments":[1]}}');
    expect(arr.ok ? null : (arr.reply as { error: { message: string } }).error.message).toBe('Invalid params: params.arguments: Invalid input: expected record, received array');
  });
});

describe("mcp / the shell recipe of docs/mcp.md that lists a server's tools", () => {
  it('runs as written in the repository (node bin/fkgqa.js, no fkgqa on PATH) and prints the tools of the void_tool setup', () => {
    const doc = fs.readFileSync(path.join(ROOT, 'docs/mcp.md'), 'utf8');
    const recipe = /<!-- recipe: list-tools[^>]*-->\n```sh\n([\s\S]*?)```/.exec(doc)?.[1];
    expect(recipe).toBeDefined();
    // As a first-time user runs it after the README's set-up: node on PATH, fkgqa not (no npm link).
    const bin = tmpDir('fkgqa-recipe-');
    fs.symlinkSync(process.execPath, path.join(bin, 'node'));
    const r = spawnSync('bash', ['-o', 'pipefail', '-c', recipe!], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, PATH: `${bin}:/usr/bin:/bin` }, timeout: 120_000 });
    expect([r.status, r.stdout, r.stderr]).toEqual([0, 'run_sparql_query\nget_void_descriptions\n', '']);
  }, 130_000);
});

describe('mcp / the table of tools per setup in docs/mcp.md', () => {
  it("lists exactly the tools each setup's server offers (kgvoyager: no get_void_descriptions, execute_query too)", async () => {
    const { createMcpServer } = await import('../src/mcp/server.js');
    const { registryFromUrls } = await import('../src/federation/registry.js');
    const { Client, InMemoryTransport } = await import('@modelcontextprotocol/client');
    const doc = fs.readFileSync(path.join(ROOT, 'docs/mcp.md'), 'utf8');
    const table = /<!-- table: tools per setup[^>]*-->\n([\s\S]*?)\n\n/.exec(doc)![1];
    const rows = Object.fromEntries(
      table
        .split('\n')
        .slice(2)
        .map((l) => l.split('|').map((c) => c.trim()))
        .map((c) => [c[1].replace(/`/g, ''), c[2].replace(/`/g, '').split(/,\s*/)]),
    );
    expect(Object.keys(rows)).toEqual(['baseline', 'high_level', 'void_tool', 'kgvoyager']);
    const offered: Record<string, string[]> = {};
    for (const setup of Object.keys(rows)) {
      const mcp = await createMcpServer({ registry: registryFromUrls(['http://127.0.0.1:9/library-shard1/sparql']), setup: setup as 'baseline', callLog: null, state: null });
      const [x, y] = InMemoryTransport.createLinkedPair();
      await mcp.server.connect(x);
      const client = new Client({ name: 'test', version: '1' });
      await client.connect(y);
      offered[setup] = (await client.listTools()).tools.map((t) => t.name);
      await client.close();
      await mcp.close();
    }
    expect(offered).toEqual(rows);
  }, 60_000);
});

describe('mcp / stdio: requests written before stdin closes', () => {
  it('answers every request it read before stdin closed (12 requests, federated ones among them), skips a cancelled one, then exits 0', () => {
    const endpoint = 'http://127.0.0.1:9/library-shard1/sparql';
    const call = (id: number, query: string) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'run_sparql_query', arguments: { query } } });
    // A FILTER beside the SERVICE sends the query through the federation engine, which first has to start (seconds): these answers come last.
    const federated = `SELECT * WHERE { SERVICE <${endpoint}> { ?s ?p ?o } FILTER(true) }`;
    const direct = `SELECT * WHERE { SERVICE <${endpoint}> { ?s ?p ?o } }`;
    const lines = [
      JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } } }),
      JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
      ...Array.from({ length: 12 }, (_, i) => (i % 3 === 0 ? call(i + 1, federated) : i % 3 === 1 ? call(i + 1, direct) : JSON.stringify({ jsonrpc: '2.0', id: i + 1, method: 'tools/list' }))),
      call(13, federated),
      JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 13, reason: 'test' } }),
    ];
    // spawnSync writes the input, then closes stdin.
    const r = spawnSync(process.execPath, [path.join(ROOT, 'bin/fkgqa.js'), 'mcp', '--endpoint', endpoint, '-q'], { input: lines.join('\n') + '\n', encoding: 'utf8', timeout: 120_000 });
    const ids = r.stdout
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { id: number }).id)
      .sort((a, b) => a - b);
    expect([r.status, ids]).toEqual([0, Array.from({ length: 13 }, (_, i) => i)]);
  }, 130_000);
});
