/**
 * `fkgqa mcp` on stdio as a child process, for tests/mcp.test.ts and tests/mcp-signals.slow.test.ts.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { ROOT } from './helpers.js';

/** The MCP initialize request (id 0). */
export const INIT = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } } };

/**
 * `fkgqa mcp` on stdio as a child, its stdin left open: replies read by id and stderr lines, each
 * waited for as an event.
 */
export function stdioChild(args: string[]) {
  const child = spawn(process.execPath, [path.join(ROOT, 'bin/fkgqa.js'), 'mcp', ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  let out = '';
  const replies = new Map<unknown, { result?: { content?: { text: string }[] } }>();
  const waiters: (() => void)[] = [];
  const wake = () => waiters.splice(0).forEach((w) => w());
  child.stderr.on('data', (d: Buffer) => ((stderr += d), wake()));
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
    let nl: number;
    while ((nl = out.indexOf('\n')) >= 0) {
      const m = JSON.parse(out.slice(0, nl)) as { id: unknown };
      out = out.slice(nl + 1);
      replies.set(m.id, m);
    }
    wake();
  });
  const exited = new Promise<{ code: number | null; signal: string | null }>((r) => child.once('exit', (code, signal) => (wake(), r({ code, signal }))));
  const until = async (ok: () => boolean) => {
    while (!ok()) {
      if (child.exitCode !== null) throw new Error(`fkgqa mcp exited (${child.exitCode}): ${stderr}`);
      await new Promise<void>((r) => waiters.push(r));
    }
  };
  const send = (m: unknown) => new Promise<void>((r) => child.stdin.write(JSON.stringify(m) + '\n', () => r()));
  const start = async () => {
    await send(INIT);
    await until(() => replies.has(0));
    await send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  };
  return { child, exited, until, send, start, replies, stderr: () => stderr };
}
