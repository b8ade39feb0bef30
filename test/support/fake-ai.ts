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

/** What the fake answers to an audio transcription: WebVTT text, another text, or an HTTP error. */
export interface FakeTranscription {
  status?: number;
  vtt?: string;
}

export const FAKE_VTT = 'WEBVTT\n\n00:00:00.000 --> 00:00:01.000\nWe shipped in two days.\n';

/**
 * A local OpenAI-compatible server (chat completions and audio transcriptions): the only stand-in in
 * the suite. Tests choose the answer for requests whose prompt contains a marker; everything else gets
 * a bland, valid analysis, and every transcription FAKE_VTT unless `transcription` says otherwise.
 */
export class FakeAi {
  readonly prompts: string[] = [];
  /** Every request body as sent, for checks of the call itself (temperature, response_format, program line). */
  readonly requests: Array<{ model: string; temperature?: number; response_format?: unknown; messages: Array<{ role: string; content: string }> }> = [];
  /** Every transcription request: the model asked for, the file's name and size, the format. */
  readonly transcriptions: Array<{ model: string; fileName: string; fileBytes: number; responseFormat: string }> = [];
  transcription: FakeTranscription = { vtt: FAKE_VTT };
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
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        if (req.method === 'POST' && req.url === '/v1/audio/transcriptions') {
          this.answerTranscription(Buffer.concat(chunks), res);
          return;
        }
        const body = Buffer.concat(chunks).toString('utf8');
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

  /** Reads the multipart form as a provider would (model, response_format, file) and answers the set transcription. */
  private answerTranscription(body: Buffer, res: http.ServerResponse): void {
    const text = body.toString('latin1');
    const field = (name: string) => new RegExp(`name="${name}"\\r\\n\\r\\n([^\\r]*)`).exec(text)?.[1] ?? '';
    const file = /name="file"; filename="([^"]*)"\r\n(?:[^\r]*\r\n)*?\r\n/.exec(text);
    const start = file ? file.index + file[0].length : -1;
    const end = start >= 0 ? text.indexOf('\r\n--', start) : -1;
    this.transcriptions.push({
      model: field('model'), fileName: file?.[1] ?? '', fileBytes: start >= 0 && end >= 0 ? end - start : 0, responseFormat: field('response_format'),
    });
    const reply = this.transcription;
    if (reply.status) {
      res.writeHead(reply.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'fake transcription failure', type: 'server_error' } }));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/vtt; charset=utf-8' });
    res.end(reply.vtt ?? FAKE_VTT);
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
