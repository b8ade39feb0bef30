/** Upload sessions (docs/collection.md#uploads-and-the-media-store): sizes, parts and the types each kind accepts. Pure. */

export const UPLOAD_KINDS = ['video', 'audio', 'image'] as const;
export type UploadKindName = (typeof UPLOAD_KINDS)[number];

const MiB = 1024 * 1024;
export const KIND_MAX_BYTES: Record<UploadKindName, number> = { video: 512 * MiB, audio: 100 * MiB, image: 15 * MiB };
export const MIN_PART_SIZE = 64 * 1024;
export const MAX_PART_SIZE = 16 * MiB;
export const DEFAULT_PART_SIZE = 8 * MiB;
export const MAX_PARTS = 10_000;
export const MAX_UPLOADS_PER_DRAFT = 10;

/** What file-type reports, mapped to the type we record; anything absent is refused (never SVG or GIF). */
export const ACCEPTED_TYPES: Record<UploadKindName, Record<string, string>> = {
  video: { 'video/mp4': 'video/mp4', 'video/quicktime': 'video/quicktime', 'video/webm': 'video/webm' },
  audio: {
    'audio/mpeg': 'audio/mpeg', 'audio/mp4': 'audio/mp4', 'audio/x-m4a': 'audio/mp4', 'audio/ogg': 'audio/ogg',
    'audio/wav': 'audio/wav', 'audio/vnd.wave': 'audio/wav', 'audio/x-wav': 'audio/wav', 'audio/webm': 'audio/webm',
    // A WebM or Matroska sniff cannot tell audio from video; the kind the customer opened decides.
    'video/webm': 'audio/webm',
  },
  image: { 'image/jpeg': 'image/jpeg', 'image/png': 'image/png', 'image/webp': 'image/webp' },
};

/** The accepted type for sniffed bytes of `kind`, or null when the bytes are not one of them. */
export function acceptedType(kind: UploadKindName, sniffed: string | undefined): string | null {
  return sniffed ? ACCEPTED_TYPES[kind][sniffed] ?? null : null;
}

export function partCountOf(size: number, partSize: number): number {
  return Math.ceil(size / partSize);
}

/** Every part but the last is exactly partSize; the last holds the rest. */
export function expectedPartSize(size: number, partSize: number, number: number): number {
  const count = partCountOf(size, partSize);
  return number < count ? partSize : size - partSize * (count - 1);
}

export const SHA256_HEX = /^[0-9a-f]{64}$/;
