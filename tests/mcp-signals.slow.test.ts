/**
 * `fkgqa mcp` on stdio ended by a signal during a call, releasing the federation engine (each case
 * starts `fkgqa mcp` children, the jena case a JVM: 26 s of wall at load 10, so in
 * `npm run test:slow`). tests/mcp.test.ts keeps SIGTERM on an idle server after a call (exit 143).
 */
import { execFileSync } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { engineTestsRun } from './helpers.js';
import { stdioChild } from './mcp-child.js';

/** An endpoint that receives requests and never answers: `hits` counts them, `arrived` waits for the n-th. */
async function hangingEndpoint() {
  let hits = 0;
  const waiters: (() => void)[] = [];
  const s = http.createServer(() => {
    hits++;
    waiters.splice(0).forEach((w) => w());
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const base = `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
  return {
    url: (name: string) => `${base}/${name}/sparql`,
    arrived: async (n = 1) => {
      while (hits < n) await new Promise<void>((r) => waiters.push(r));
    },
    close: () => new Promise<void>((r) => (s.close(() => r()), s.closeAllConnections())),
  };
}

/** Waits for `event` while call `id` is running; fails at once with its answer if the call ends first. */
async function inFlight(c: ReturnType<typeof stdioChild>, id: number, event: Promise<void>): Promise<void> {
  const answered = c
    .until(() => c.replies.has(id))
    .then(() => {
      throw new Error(`call ${id} ended before the event: ${JSON.stringify(c.replies.get(id))}`);
    });
  await Promise.race([event, answered]);
  answered.catch(() => {});
}

const psChildren = (pid: number) => {
  try {
    return execFileSync('ps', ['-o', 'pid=,comm=', '--ppid', String(pid)], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .filter(Boolean);
  } catch {
    return []; // ps exits 1 when there is none
  }
};
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Whether the Jena case runs here (Java and Debian's Jena; see engineTestsRun). */
const JENA_RUNS = await engineTestsRun('jena');

describe('fkgqa mcp / signals end the stdio server during a call with stdin still open (130/143), releasing the federation engine', () => {
  it('during a call: SIGINT during a direct query exits 130; SIGTERM during a federated query on Comunica exits 143', async () => {
    const hang = await hangingEndpoint();
    try {
      const direct = stdioChild(['--endpoint', hang.url('a'), '-q', '--call-log', '/dev/null']);
      try {
        await direct.start();
        await direct.send({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'run_sparql_query', arguments: { query: `ASK { SERVICE <${hang.url('a')}> { ?s ?p ?o } }`, timeout_ms: 100000 } },
        });
        await inFlight(direct, 1, hang.arrived(1));
        direct.child.kill('SIGINT');
        expect(await direct.exited).toEqual({ code: 130, signal: null });
        expect(direct.replies.has(1)).toBe(false);
      } finally {
        direct.child.kill('SIGKILL');
      }
      const fed = stdioChild(['--endpoint', hang.url('a'), '--endpoint', hang.url('b'), '--call-log', '/dev/null']);
      try {
        await fed.start();
        await fed.send({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'run_sparql_query', arguments: { query: `SELECT * { SERVICE <${hang.url('a')}> { ?s ?p ?o } SERVICE <${hang.url('b')}> { ?o ?q ?r } }`, timeout_ms: 100000 } },
        });
        await inFlight(fed, 1, hang.arrived(2)); // the engine's requests to the endpoints
        fed.child.kill('SIGTERM');
        expect(await fed.exited).toEqual({ code: 143, signal: null });
        expect(fed.stderr()).toContain('fkgqa mcp: interrupted (SIGTERM) after 0 tool calls; stopping the federation engine');
      } finally {
        fed.child.kill('SIGKILL');
      }
    } finally {
      await hang.close();
    }
  });

  it.runIf(JENA_RUNS)('jena as the engine: SIGTERM after its warm-up and during a federated query exits 143 and ends the JVM', async () => {
    const hang = await hangingEndpoint();
    const c = stdioChild(['--endpoint', hang.url('a'), '--endpoint', hang.url('b'), '--federation-engine', 'jena', '--call-log', '/dev/null']);
    try {
      await c.start();
      await c.until(() => c.stderr().includes('fkgqa mcp: federation engine jena ready'));
      const jvm = psChildren(c.child.pid!).filter((l) => l.endsWith('java'));
      expect(jvm).toHaveLength(1);
      const jvmPid = Number(jvm[0].trim().split(/\s+/)[0]);
      await c.send({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'run_sparql_query', arguments: { query: `SELECT * { SERVICE <${hang.url('a')}> { ?s ?p ?o } SERVICE <${hang.url('b')}> { ?o ?q ?r } }`, timeout_ms: 100000 } },
      });
      await inFlight(c, 1, hang.arrived(1));
      c.child.kill('SIGTERM');
      expect(await c.exited).toEqual({ code: 143, signal: null });
      expect(alive(jvmPid)).toBe(false);
    } finally {
      c.child.kill('SIGKILL');
      await hang.close();
    }
  });
});
