import { Readable } from 'node:stream';
import { FastifyInstance, FastifyRequest } from 'fastify';
import { Chunks } from '../../runtime/media-store';
import { validationFailed } from '../../runtime/service-error';

/**
 * Routes whose body is a file take it as the unread stream: Fastify's parser reads and holds nothing,
 * so the credential, the binding and the declared size are judged (in onRequest and at the top of the
 * handler) before a byte is read, and the bytes then go to the media store as they arrive. A refusal
 * sent while the body is still arriving closes the connection: the client is not kept sending the rest.
 */
export function takeStreamedBodies(app: FastifyInstance, contentType: string | string[]): void {
  app.addContentTypeParser(contentType, (_request, payload, done) => done(null, payload));
  app.addHook('onSend', async (request, reply) => {
    // `complete` is false only on a real socket whose message has not fully arrived (inject has none).
    if (request.raw.complete === false) reply.header('connection', 'close');
  });
}

/** The body's declared length: a file's size is known before it is sent, so a chunked body is refused. */
export function declaredLength(request: FastifyRequest): number {
  const raw = request.headers['content-length'];
  if (raw === undefined || !/^\d{1,15}$/.test(raw)) {
    throw validationFailed([{ path: 'content-length', message: 'send the Content-Length of the bytes (a chunked body is not taken)' }]);
  }
  return Number(raw);
}

/**
 * The streamed body's chunks. Stopping early (a refused head) leaves the request open, so the refusal
 * still reaches the client before the connection closes.
 */
export function bodyChunks(request: FastifyRequest): Chunks {
  return request.body instanceof Readable ? request.body.iterator({ destroyOnReturn: false }) : [];
}
