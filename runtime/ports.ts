import net from 'node:net';
import { StartupError } from './startup-error';

/** A port free on 127.0.0.1 now (for a listener whose port must be named before it starts). */
export function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Fails with one line when `port` cannot be listened on, before anything else starts, so a busy
 * port is named with the variable that moves it instead of surfacing as some server's own error.
 */
export function assertPortFree(host: string, port: number, variable: string): Promise<void> {
  if (port === 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', (err: NodeJS.ErrnoException) => {
      reject(new StartupError(err.code === 'EADDRINUSE'
        ? `port ${port} is in use (${variable}): stop what listens there, or set ${variable} to a free port`
        : `cannot listen on ${host}:${port} (${variable}, ${err.code ?? err.message}): set ${variable} to another port`));
    });
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve()));
  });
}
