import http from 'node:http';
import { AddressInfo } from 'node:net';

/** One request's arrival, as the receiver process reports it to the benchmark. */
export interface Arrival {
  /** The path and `service-event-id` of a delivery (`/hook/0 evt_…`), or `x-bench-id` for the direct POSTs. */
  id: string | null;
  /** The signal of a `signal.created` delivery. */
  signalId: string | null;
  /** Wall-clock milliseconds (fractional) when the body was read. */
  at: number;
}

/**
 * The webhook receiver as a process of its own (a third party, not sharing the benchmark's event loop):
 * answers 204 at once and reports each arrival to its parent over IPC. Prints `port <n>` when listening.
 */
if (require.main === module) {
  const server = http.createServer((req, res) => {
    const event = req.headers['service-event-id'];
    const id = typeof event === 'string' ? `${req.url} ${event}` : req.headers['x-bench-id'];
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = performance.timeOrigin + performance.now();
      res.writeHead(204).end();
      const signalId = req.headers['service-event-type'] === 'signal.created'
        ? JSON.parse(Buffer.concat(chunks).toString('utf8')).data.signalId as string : null;
      const arrival: Arrival = { id: typeof id === 'string' ? id : null, signalId, at };
      process.send?.(arrival);
    });
  });
  server.listen(0, '127.0.0.1', () => console.log(`port ${(server.address() as AddressInfo).port}`));
  process.on('disconnect', () => process.exit(0));
}
