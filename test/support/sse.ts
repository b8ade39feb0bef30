import http from 'node:http';

export interface SseEvent {
  id?: string;
  event: string;
  data: unknown;
}

/** A minimal server-sent-events reader over real HTTP, for streams held by a listening app. */
export class SseClient {
  readonly events: SseEvent[] = [];
  comments = 0;
  status = 0;
  headers: http.IncomingHttpHeaders = {};
  /** The body of an answer that is not a stream (a refusal's envelope). */
  body = '';
  private request: http.ClientRequest | null = null;
  private waiters: Array<() => void> = [];
  closedByServer = false;

  static open(url: string, headers: Record<string, string>): Promise<SseClient> {
    const client = new SseClient();
    return new Promise((resolve, reject) => {
      client.request = http.get(url, { headers: { accept: 'text/event-stream', ...headers } }, (res) => {
        client.status = res.statusCode ?? 0;
        client.headers = res.headers;
        let buffer = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          if (client.status !== 200) {
            client.body += chunk;
            return;
          }
          buffer += chunk;
          let cut;
          while ((cut = buffer.indexOf('\n\n')) >= 0) {
            client.parse(buffer.slice(0, cut));
            buffer = buffer.slice(cut + 2);
          }
        });
        res.on('end', () => {
          client.closedByServer = true;
          client.wake();
        });
        resolve(client);
      });
      client.request.on('error', reject);
    });
  }

  private parse(block: string): void {
    const event: Partial<SseEvent> & { lines: string[] } = { lines: [] };
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) this.comments += 1;
      else if (line.startsWith('id: ')) event.id = line.slice(4);
      else if (line.startsWith('event: ')) event.event = line.slice(7);
      else if (line.startsWith('data: ')) event.lines.push(line.slice(6));
    }
    if (event.event) this.events.push({ id: event.id, event: event.event, data: JSON.parse(event.lines.join('\n')) });
    this.wake();
  }

  private wake(): void {
    for (const waiter of this.waiters.splice(0)) waiter();
  }

  /** Waits until `count` events of the kind arrived (or the stream ended); answers them. */
  async waitFor(kind: string, count = 1, timeoutMs = 10_000): Promise<SseEvent[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.events.filter((e) => e.event === kind);
      if (found.length >= count) return found;
      if (this.closedByServer || Date.now() > deadline) throw new Error(`expected ${count} ${kind} events, got ${found.length}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 200);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  close(): void {
    this.request?.destroy();
  }
}
