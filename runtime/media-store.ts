import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand, CompleteMultipartUploadCommand, CreateBucketCommand, CreateMultipartUploadCommand,
  DeleteObjectsCommand, GetObjectCommand, HeadBucketCommand, PutObjectCommand, S3Client, UploadPartCommand,
} from '@aws-sdk/client-s3';
import { Config } from './config';

/** A byte range, both ends inclusive. */
export interface ByteRange { start: number; end: number }

/**
 * Where uploaded bytes live (never in PostgreSQL rows): a folder under SV_DATA_DIR, or an
 * S3-compatible bucket shared by every API and worker process. Keys are `/`-separated paths.
 */
export interface MediaStore {
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

  async put(key: string, bytes: Buffer): Promise<void> {
    const file = this.file(key);
    await fs.promises.mkdir(path.dirname(file), { recursive: true });
    // Written beside and renamed, so a reader never sees half a part.
    const temp = `${file}.${process.pid}.${Date.now()}.tmp`;
    await fs.promises.writeFile(temp, bytes);
    await fs.promises.rename(temp, file);
  }

  async compose(key: string, sources: string[], inspect: (chunk: Buffer) => void): Promise<void> {
    const file = this.file(key);
    await fs.promises.mkdir(path.dirname(file), { recursive: true });
    const temp = `${file}.${process.pid}.${Date.now()}.tmp`;
    const out = fs.createWriteStream(temp);
    try {
      for (const source of sources) {
        for await (const chunk of fs.createReadStream(this.file(source))) {
          inspect(chunk as Buffer);
          if (!out.write(chunk)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
        }
      }
      await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
      await fs.promises.rename(temp, file);
    } catch (err) {
      out.destroy();
      await fs.promises.rm(temp, { force: true });
      throw err;
    }
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
      for (const source of sources) {
        for await (const chunk of await this.read(source)) {
          inspect(chunk as Buffer);
          pending.push(chunk as Buffer);
          pendingBytes += (chunk as Buffer).length;
          if (pendingBytes >= S3_PART_BYTES) await flush();
        }
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

