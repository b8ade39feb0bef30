import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  AbortMultipartUploadCommand, CompleteMultipartUploadCommand, CreateBucketCommand, CreateMultipartUploadCommand,
  DeleteObjectsCommand, GetObjectCommand, HeadBucketCommand, PutObjectCommand, S3Client, UploadPartCommand,
} from '@aws-sdk/client-s3';
import { Config } from './config';

/** A body as it arrives, or bytes already at hand. */
export type Chunks = AsyncIterable<Buffer> | Iterable<Buffer>;

/** A byte range, both ends inclusive. */
export interface ByteRange { start: number; end: number }

/**
 * Where uploaded bytes live (never in PostgreSQL rows): a folder under SV_DATA_DIR, or an
 * S3-compatible bucket shared by every API and worker process. Keys are `/`-separated paths.
 */
export interface MediaStore {
  /**
   * Writes `body` as `key` chunk by chunk, never holding it whole: the object appears only once the
   * body ended without an error, so a body that throws (a refused check, a dropped connection) leaves
   * whatever `key` held before.
   */
  write(key: string, body: Chunks): Promise<void>;
  put(key: string, bytes: Buffer): Promise<void>;
  /** Writes the concatenation of `sources`, in order, as `key`; each chunk passes through `inspect` on the way. */
  compose(key: string, sources: string[], inspect: (chunk: Buffer) => void): Promise<void>;
  read(key: string, range?: ByteRange): Promise<Readable>;
  remove(keys: string[]): Promise<void>;
}

const SAFE_KEY = /^[A-Za-z0-9_-]+(\/[A-Za-z0-9_.-]+)*$/;

function checkKey(key: string): string {
  if (!SAFE_KEY.test(key) || key.split('/').some((part) => part === '..' || part === '.')) throw new Error(`bad media key ${key}`);
  return key;
}

export class FolderMediaStore implements MediaStore {
  constructor(private readonly root: string) {}

  private file(key: string): string {
    return path.join(this.root, checkKey(key));
  }

  async write(key: string, body: Chunks): Promise<void> {
    const file = this.file(key);
    await fs.promises.mkdir(path.dirname(file), { recursive: true });
    // Written beside and renamed, so a reader never sees half a file.
    const temp = `${file}.${process.pid}.${Date.now()}.${Math.random().toString(36).slice(2)}.tmp`;
    try {
      await pipeline(Readable.from(body), fs.createWriteStream(temp));
      await fs.promises.rename(temp, file);
    } catch (err) {
      await fs.promises.rm(temp, { force: true });
      throw err;
    }
  }

  async put(key: string, bytes: Buffer): Promise<void> {
    await this.write(key, [bytes]);
  }

  async compose(key: string, sources: string[], inspect: (chunk: Buffer) => void): Promise<void> {
    await this.write(key, concatenated(this, sources, inspect));
  }

  async read(key: string, range?: ByteRange): Promise<Readable> {
    return fs.createReadStream(this.file(key), range ? { start: range.start, end: range.end } : {});
  }

  async remove(keys: string[]): Promise<void> {
    for (const key of keys) await fs.promises.rm(this.file(key), { force: true });
  }
}

/** S3 parts must be at least 5 MiB, except the last. */
const S3_PART_BYTES = 8 * 1024 * 1024;

export class S3MediaStore implements MediaStore {
  private readonly client: S3Client;
  private bucketChecked = false;

  constructor(private readonly settings: NonNullable<Config['mediaS3']>) {
    this.client = new S3Client({
      endpoint: settings.endpoint,
      region: settings.region,
      forcePathStyle: true,
      credentials: { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey },
    });
  }

  /** Creates the bucket on first use when it is missing, so a fresh MinIO works without a setup step. */
  private async bucket(): Promise<string> {
    if (!this.bucketChecked) {
      try {
        await this.client.send(new HeadBucketCommand({ Bucket: this.settings.bucket }));
      } catch {
        await this.client.send(new CreateBucketCommand({ Bucket: this.settings.bucket })).catch((err: { name?: string }) => {
          if (err.name !== 'BucketAlreadyOwnedByYou' && err.name !== 'BucketAlreadyExists') throw err;
        });
      }
      this.bucketChecked = true;
    }
    return this.settings.bucket;
  }

  async put(key: string, bytes: Buffer): Promise<void> {
    await this.client.send(new PutObjectCommand({ Bucket: await this.bucket(), Key: checkKey(key), Body: bytes }));
  }

  async compose(key: string, sources: string[], inspect: (chunk: Buffer) => void): Promise<void> {
    await this.write(key, concatenated(this, sources, inspect));
  }

  /** One PUT for a body under a part's size; a multipart upload of 8 MiB parts (aborted on an error) for a larger one. */
  async write(key: string, body: Chunks): Promise<void> {
    const Bucket = await this.bucket();
    const Key = checkKey(key);
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    let uploadId: string | undefined;
    const parts: Array<{ ETag: string | undefined; PartNumber: number }> = [];
    const flush = async () => {
      uploadId ??= (await this.client.send(new CreateMultipartUploadCommand({ Bucket, Key }))).UploadId;
      const PartNumber = parts.length + 1;
      const sent = await this.client.send(new UploadPartCommand({ Bucket, Key, UploadId: uploadId, PartNumber, Body: Buffer.concat(pending) }));
      parts.push({ ETag: sent.ETag, PartNumber });
      pending = [];
      pendingBytes = 0;
    };
    try {
      for await (const chunk of body) {
        pending.push(chunk);
        pendingBytes += chunk.length;
        if (pendingBytes >= S3_PART_BYTES) await flush();
      }
      if (uploadId === undefined) {
        await this.client.send(new PutObjectCommand({ Bucket, Key, Body: Buffer.concat(pending) }));
        return;
      }
      if (pendingBytes > 0) await flush();
      await this.client.send(new CompleteMultipartUploadCommand({ Bucket, Key, UploadId: uploadId, MultipartUpload: { Parts: parts } }));
    } catch (err) {
      if (uploadId) await this.client.send(new AbortMultipartUploadCommand({ Bucket, Key, UploadId: uploadId })).catch(() => undefined);
      throw err;
    }
  }

  async read(key: string, range?: ByteRange): Promise<Readable> {
    const res = await this.client.send(new GetObjectCommand({
      Bucket: await this.bucket(), Key: checkKey(key), ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}),
    }));
    return res.Body as Readable;
  }

  async remove(keys: string[]): Promise<void> {
    if (keys.length === 0) return;
    const Bucket = await this.bucket();
    for (let i = 0; i < keys.length; i += 1000) {
      await this.client.send(new DeleteObjectsCommand({
        Bucket, Delete: { Objects: keys.slice(i, i + 1000).map((k) => ({ Key: checkKey(k) })), Quiet: true },
      }));
    }
  }
}

/** The objects `sources`, one after another, each chunk shown to `inspect` on the way. */
async function* concatenated(store: MediaStore, sources: string[], inspect: (chunk: Buffer) => void): AsyncIterable<Buffer> {
  for (const source of sources) {
    for await (const chunk of await store.read(source)) {
      inspect(chunk as Buffer);
      yield chunk as Buffer;
    }
  }
}

/** How much of a file's head its type is told from (npm file-type). */
export const SNIFF_BYTES = 64 * 1024;

/** What a received body held: its length and sha256. */
export interface Received {
  size: number;
  sha256: string;
}

export interface ReceiveChecks {
  /** The most bytes the body may hold; one more and `tooLarge` is thrown, before it is written. */
  maxBytes: number;
  tooLarge: (received: number) => Error;
  /** The first SNIFF_BYTES (or all, when shorter), before any byte is written: throws to refuse (a sniffed type). */
  head?: (bytes: Buffer) => unknown;
  /** Every chunk on its way (a text check); throws to refuse. */
  inspect?: (chunk: Buffer) => void;
  /** The whole body's length and sha256, before the object is committed: throws to refuse (a wrong length or checksum). */
  end?: (received: Received) => unknown;
}

/**
 * Streams a request body into the store as `key` while counting, hashing and sniffing it: nothing is
 * held in memory past the head, and a refused body leaves no object behind.
 */
export async function receive(store: MediaStore, key: string, body: Chunks, checks: ReceiveChecks): Promise<Received> {
  const hash = createHash('sha256');
  let size = 0;
  let received: Received | undefined;
  async function* checked(): AsyncIterable<Buffer> {
    let head: Buffer[] | null = checks.head ? [] : null;
    let headSize = 0;
    // The head is held back until it is judged, so a refused type writes nothing.
    async function* judged(held: Buffer[]): AsyncIterable<Buffer> {
      await checks.head!(Buffer.concat(held));
      head = null;
      yield* held;
    }
    for await (const chunk of body) {
      size += chunk.length;
      if (size > checks.maxBytes) throw checks.tooLarge(size);
      hash.update(chunk);
      checks.inspect?.(chunk);
      if (head === null) {
        yield chunk;
      } else {
        head.push(chunk);
        headSize += chunk.length;
        if (headSize >= SNIFF_BYTES) yield* judged(head);
      }
    }
    if (head !== null) yield* judged(head);
    received = { size, sha256: hash.digest('hex') };
    await checks.end?.(received);
  }
  await store.write(key, checked());
  return received!;
}

const stores = new Map<string, MediaStore>();

/** The configured store; one per process and configuration. */
export function mediaStoreOf(config: Pick<Config, 'dataDir' | 'mediaS3'>): MediaStore {
  const id = config.mediaS3 ? `s3:${config.mediaS3.endpoint}/${config.mediaS3.bucket}` : `dir:${config.dataDir}`;
  let store = stores.get(id);
  if (!store) {
    store = config.mediaS3 ? new S3MediaStore(config.mediaS3) : new FolderMediaStore(path.join(config.dataDir, 'media'));
    stores.set(id, store);
  }
  return store;
}

export async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
