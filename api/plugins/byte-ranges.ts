import { FastifyReply } from 'fastify';
import { MediaStore } from '../../runtime/media-store';

/** A single `bytes=` range of a file of `size` bytes: the slice, 'unsatisfiable', or null for the whole file. */
export function rangeOf(header: string | undefined, size: number): { start: number; end: number } | 'unsatisfiable' | null {
  const match = header ? /^bytes=(\d*)-(\d*)$/.exec(header.trim()) : null;
  if (!match || (match[1] === '' && match[2] === '')) return null;
  let start: number;
  let end: number;
  if (match[1] === '') {
    start = Math.max(0, size - Number(match[2]));
    end = size - 1;
  } else {
    start = Number(match[1]);
    end = match[2] === '' ? size - 1 : Math.min(Number(match[2]), size - 1);
  }
  return start > end || start >= size ? 'unsatisfiable' : { start, end };
}

/** Sends a media-store file whole (200) or the one range asked for (206, or 416); the caller sets the other headers. */
export async function sendStoredRange(
  reply: FastifyReply, rangeHeader: string | undefined, media: { size: number; storageKey: string }, store: MediaStore,
): Promise<FastifyReply> {
  const range = rangeOf(rangeHeader, media.size);
  if (range === 'unsatisfiable') return reply.code(416).header('content-range', `bytes */${media.size}`).send();
  if (range === null) return reply.header('content-length', String(media.size)).send(await store.read(media.storageKey));
  return reply.code(206).header('content-range', `bytes ${range.start}-${range.end}/${media.size}`)
    .header('content-length', String(range.end - range.start + 1)).send(await store.read(media.storageKey, range));
}
