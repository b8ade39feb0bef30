import http from 'node:http';
import { AddressInfo } from 'node:net';

export interface FakeReply {
  /** An HTTP error status instead of an answer. */
  status?: number;
  /** The assistant message, verbatim (for malformed answers). */
  content?: string;
  /** The assistant message as JSON. */
  json?: unknown;
  delayMs?: number;
  /** The `model` the answer reports; null leaves it out. The requested model by default. */
  model?: string | null;
}

interface Rule {
  marker: string;
  reply: FakeReply;
}

/**
 * A local OpenAI-compatible chat-completions server: the only stand-in in the suite. Tests choose the
 * answer for requests whose prompt contains a marker; everything else gets a bland, valid analysis.
 */
export class FakeAi {
  readonly prompts: string[] = [];
  /** Every request body as sent, for checks of the call itself (temperature, response_format, program line). */
  readonly requests: Array<{ model: string; temperature?: number; response_format?: unknown; messages: Array<{ role: string; content: string }> }> = [];
  private rules: Rule[] = [];
  private server: http.Server | null = null;
  defaultReply: FakeReply = {
    json: { sentiment: 'neutral', urgency: 'medium', summary: 'The customer described a problem.', candidateFeatureIds: [] },
  };

  /** Answers requests mentioning `marker` with `reply` until the returned function is called. */
  when(marker: string, reply: FakeReply): () => void {
    const rule = { marker, reply };
    this.rules.unshift(rule);
    return () => {
      this.rules = this.rules.filter((r) => r !== rule);
    };
  }

  requestsMentioning(marker: string): number {
    return this.prompts.filter((p) => p.includes(marker)).length;
  }

  async start(): Promise<string> {
    this.server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
          res.writeHead(404).end();
          return;
        }
        const request = JSON.parse(body) as FakeAi['requests'][number];
        this.requests.push(request);
        const prompt = request.messages.map((m) => m.content).join('\n');
        this.prompts.push(prompt);
        const reply = this.rules.find((r) => prompt.includes(r.marker))?.reply ?? this.defaultReply;
        setTimeout(() => {
          if (reply.status) {
            res.writeHead(reply.status, { 'content-type': 'application/json' });
            res.end(JSON.stringify({ error: { message: 'fake provider failure', type: 'server_error' } }));
            return;
          }
          const content = reply.content ?? JSON.stringify(reply.json);
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({
            id: 'chatcmpl-fake', object: 'chat.completion', created: Math.floor(Date.now() / 1000),
            ...(reply.model === null ? {} : { model: reply.model ?? request.model }),
            choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
            usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
          }));
        }, reply.delayMs ?? 0);
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
