/**
 * A fake OpenAI-compatible chat-completions server on loopback for the eval tests (never a real
 * model): each question has a script of replies chosen by the turn (assistant messages so far) and
 * the attempt (tries of that turn); a reply can also hang (never answer) or close the connection.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ChatMessage } from '../src/eval/record.js';

/** A scripted reply: an HTTP answer, no answer at all (`hang`), or a connection closed without answer (`close`). */
export type Reply = { status: number; body?: unknown; headers?: Record<string, string> } | 'hang' | 'close';

/** One request the fake received. */
export interface FakeRequest {
  question: string;
  turn: number;
  attempt: number;
  /** performance.now() when it arrived. */
  at: number;
  authorization: string | undefined;
  body: { model: string; temperature?: number; seed?: number; tools?: { function: { name: string } }[]; messages: ChatMessage[] };
}

export interface FakeApi {
  /** Base URL (`http://127.0.0.1:<port>/v1`). */
  url: string;
  requests: FakeRequest[];
  close(): Promise<void>;
}

/** A tool call of an assistant message. */
export const toolCall = (id: string, name: string, args: string) => ({ id, type: 'function', function: { name, arguments: args } });

/** A 200 answer carrying one assistant message (with `usage`). */
export const ok = (message: object, usage = { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 }): Reply => ({
  status: 200,
  body: { id: 'x', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: null, ...message }, finish_reason: 'tool_calls' }], usage },
});

/** Starts the fake; `script` may be async (e.g. to kill an endpoint before answering) and sees the whole request (e.g. its API key). */
export async function fakeApi(script: (question: string, turn: number, attempt: number, request: FakeRequest) => Reply | Promise<Reply>): Promise<FakeApi> {
  const requests: FakeRequest[] = [];
  const attempts = new Map<string, number>();
  const hanging = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    let data = '';
    req.on('data', (c) => (data += c));
    req.on('end', async () => {
      // eval's check that the API is up (GET /v1/models): answered 404, as many servers do, not counted.
      if (req.method !== 'POST') {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found"}}');
        return;
      }
      const body = JSON.parse(data) as FakeRequest['body'];
      const question = body.messages.find((m) => m.role === 'user')?.content ?? '';
      const turn = body.messages.filter((m) => m.role === 'assistant').length + 1;
      const key = `${question}|${turn}`;
      const attempt = (attempts.get(key) ?? 0) + 1;
      attempts.set(key, attempt);
      const request: FakeRequest = { question, turn, attempt, at: performance.now(), authorization: req.headers.authorization, body };
      requests.push(request);
      const r = req.url === '/v1/chat/completions' ? await script(question, turn, attempt, request) : { status: 404, body: { error: { message: 'not found' } } };
      if (r === 'hang') {
        hanging.add(res);
        return;
      }
      if (r === 'close') {
        req.socket.destroy();
        return;
      }
      res.writeHead(r.status, { 'content-type': 'application/json', ...(r.headers ?? {}) });
      res.end(JSON.stringify(r.body ?? { error: { message: 'scripted failure' } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    requests,
    close: () =>
      new Promise((resolve) => {
        for (const res of hanging) res.socket?.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
