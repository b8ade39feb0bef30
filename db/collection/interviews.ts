import { DataSource, EntityManager } from 'typeorm';
import { Chunks, MediaStore, receive } from '../../runtime/media-store';
import { ServiceError, conflict, notFound } from '../../runtime/service-error';
import { newId } from '../rules/ids';
import { KIND_MAX_BYTES } from '../rules/upload-rules';
import { assertOwnProduct, Teammate } from './scope';
import { issueSecret } from './secrets';
import { chargeAddress, expired, invalidInput, mediaIdOf, mediaKey, sniffAs } from './uploads';

/** An interview link lives 30 days (docs/collection.md#customers). */
export const INTERVIEW_TTL_DAYS = 30;
const DAY_MS = 86_400_000;

export interface InterviewRow {
  id: string;
  organization_id: string;
  product_id: string;
  proof_item_id: string | null;
  person_ref: string | null;
  questions: Array<{ id: string; text: string }>;
  state: 'open' | 'finished';
  expires_at: Date;
  finished_at: Date | null;
}

export interface NewInterview {
  productId: string;
  proofItemId?: string;
  personRef?: string;
  email?: string;
  questions: Array<{ text: string }>;
}

/** A teammate's asynchronous case-study interview; its `iv_` link secret is shown once. */
export async function createInterview(ds: DataSource, who: Teammate, body: NewInterview) {
  return ds.transaction(async (em) => {
    await assertOwnProduct(em, who.organizationId, body.productId);
    if (body.proofItemId) {
      const rows = await em.query(`SELECT 1 FROM proof_items WHERE id = $1 AND product_id = $2`, [body.proofItemId, body.productId]);
      if (rows.length === 0) throw notFound('proof item');
    }
    const id = newId('ivw');
    const expiresAt = new Date(Date.now() + INTERVIEW_TTL_DAYS * DAY_MS);
    const questions = body.questions.map((q, i) => ({ id: `q${i + 1}`, text: q.text }));
    await em.query(
      `INSERT INTO collection_interviews (id, organization_id, product_id, proof_item_id, person_ref, email, questions, state, created_by, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, 'open', $8, $9)`,
      [id, who.organizationId, body.productId, body.proofItemId ?? null, body.personRef ?? null, body.email?.toLowerCase() ?? null,
        JSON.stringify(questions), who.teammateId, expiresAt]);
    const interviewToken = await issueSecret(em, 'interview', {
      organizationId: who.organizationId, productId: body.productId, interviewId: id, personRef: body.personRef ?? null, expiresAt,
    });
    return { interview: { id, state: 'open' as const, questions, expiresAt: expiresAt.toISOString() }, interviewToken };
  });
}

async function findInterview(em: DataSource | EntityManager, id: string, lock = false): Promise<InterviewRow> {
  const [row]: InterviewRow[] = await em.query(`SELECT * FROM collection_interviews WHERE id = $1${lock ? ' FOR UPDATE' : ''}`, [id]);
  if (!row) throw notFound('interview');
  return row;
}

function assertOpen(i: InterviewRow): void {
  if (i.state === 'finished') throw conflict('this interview is finished');
  if (i.expires_at.getTime() <= Date.now()) throw expired('interview');
}

/** What the customer sees: each question with the answer given so far (text, recorded media). */
export async function getInterview(em: DataSource | EntityManager, id: string) {
  const i = await findInterview(em, id);
  const answers: Array<{ question_id: string; text: string | null; media_id: string | null }> = await em.query(
    `SELECT question_id, text, media_id FROM collection_interview_answers WHERE interview_id = $1`, [id]);
  const byQuestion = new Map(answers.map((a) => [a.question_id, a]));
  return {
    id: i.id,
    state: i.state,
    expiresAt: i.expires_at.toISOString(),
    finishedAt: i.finished_at?.toISOString() ?? null,
    questions: i.questions.map((q) => {
      const a = byQuestion.get(q.id);
      return { id: q.id, text: q.text, answer: a ? { text: a.text, mediaId: a.media_id } : null };
    }),
  };
}

const questionOf = (i: InterviewRow, questionId: string) => {
  if (!i.questions.some((q) => q.id === questionId)) throw invalidInput(`${questionId} is not a question of this interview`);
};

export async function answerInterview(ds: DataSource, id: string, questionId: string, text: string) {
  return ds.transaction(async (em) => {
    const i = await findInterview(em, id, true);
    assertOpen(i);
    questionOf(i, questionId);
    await em.query(
      `INSERT INTO collection_interview_answers (interview_id, question_id, text) VALUES ($1, $2, $3)
       ON CONFLICT (interview_id, question_id) DO UPDATE SET text = EXCLUDED.text, updated_at = now()`, [id, questionId, text]);
    return getInterview(em, id);
  });
}

export async function finishInterview(ds: DataSource, id: string) {
  return ds.transaction(async (em) => {
    const i = await findInterview(em, id, true);
    assertOpen(i);
    await em.query(`UPDATE collection_interviews SET state = 'finished', finished_at = now() WHERE id = $1`, [id]);
    return getInterview(em, id);
  });
}

/**
 * Opens the one-request upload of a recorded answer and issues its `ut_` token (shown once); the bytes
 * count against the client address's daily upload quota, as a draft's uploads do.
 */
export async function startInterviewUpload(
  ds: DataSource, id: string, body: { questionId: string; size: number; sha256: string }, quota: { clientAddress: string; addressDailyBytes: number },
) {
  if (body.size > KIND_MAX_BYTES.video) throw new ServiceError('TOO_LARGE', `a recorded answer may be at most ${KIND_MAX_BYTES.video} bytes`);
  return ds.transaction(async (em) => {
    const i = await findInterview(em, id, true);
    assertOpen(i);
    questionOf(i, body.questionId);
    await chargeAddress(em, quota.clientAddress, body.size, quota.addressDailyBytes);
    const uploadId = newId('ups');
    await em.query(
      `INSERT INTO collection_interview_uploads (id, interview_id, question_id, size, sha256, status, client_address)
       VALUES ($1, $2, $3, $4, $5, 'open', $6)`,
      [uploadId, id, body.questionId, body.size, body.sha256, quota.clientAddress]);
    const uploadToken = await issueSecret(em, 'upload', {
      organizationId: i.organization_id, productId: i.product_id, interviewId: id, uploadId, expiresAt: i.expires_at,
    });
    return {
      upload: { id: uploadId, questionId: body.questionId, status: 'open', size: body.size, sha256: body.sha256, expiresAt: i.expires_at.toISOString() },
      uploadToken,
    };
  });
}

/**
 * The answer's raw bytes in one request, written once (a second PUT is ALREADY_USED): the size and
 * sha256 given at start, and bytes that sniff as an accepted video type. The declared length is judged
 * before a byte is read; the bytes then stream to the media store as `med_` media, which becomes the
 * question's answer.
 */
export async function putInterviewUpload(
  ds: DataSource, store: MediaStore, interviewId: string, uploadId: string, body: { chunks: Chunks; length: number },
) {
  const [upload]: Array<{ status: string; size: string; sha256: string; question_id: string }> = await ds.query(
    `SELECT status, size, sha256, question_id FROM collection_interview_uploads WHERE id = $1 AND interview_id = $2`, [uploadId, interviewId]);
  if (!upload) throw notFound('upload');
  if (upload.status === 'complete') throw new ServiceError('ALREADY_USED', 'this answer was already uploaded');
  const i = await findInterview(ds, interviewId);
  assertOpen(i);
  const opened = Number(upload.size);
  const wrongSize = (got: number) => (got > opened
    ? new ServiceError('TOO_LARGE', `the upload was opened for ${opened} bytes; got ${got}`)
    : invalidInput(`the upload was opened for ${opened} bytes; got ${got}`));
  if (body.length !== opened) throw wrongSize(body.length);
  const mediaId = mediaIdOf(uploadId);
  const key = mediaKey(i.organization_id, mediaId);
  let contentType = '';
  const { size, sha256 } = await receive(store, key, body.chunks, {
    maxBytes: opened,
    tooLarge: wrongSize,
    head: async (bytes) => {
      contentType = await sniffAs('video', bytes);
    },
    end: (received) => {
      if (received.size !== opened) throw wrongSize(received.size);
      if (received.sha256 !== upload.sha256) throw new ServiceError('CHECKSUM_MISMATCH', 'the bytes do not match the sha256 given at start');
    },
  });
  return ds.transaction(async (em) => {
    const [locked]: Array<{ status: string }> = await em.query(
      `SELECT status FROM collection_interview_uploads WHERE id = $1 FOR UPDATE`, [uploadId]);
    // Another request wrote the same checked bytes under the same key first.
    if (locked.status === 'complete') throw new ServiceError('ALREADY_USED', 'this answer was already uploaded');
    await em.query(
      `INSERT INTO collection_media (id, organization_id, product_id, upload_id, kind, content_type, size, sha256, storage_key)
       VALUES ($1, $2, $3, $4, 'video', $5, $6, $7, $8)`,
      [mediaId, i.organization_id, i.product_id, uploadId, contentType, size, sha256, key]);
    await em.query(`UPDATE collection_interview_uploads SET status = 'complete', media_id = $2 WHERE id = $1`, [uploadId, mediaId]);
    await em.query(
      `INSERT INTO collection_interview_answers (interview_id, question_id, media_id) VALUES ($1, $2, $3)
       ON CONFLICT (interview_id, question_id) DO UPDATE SET media_id = EXCLUDED.media_id, updated_at = now()`,
      [interviewId, upload.question_id, mediaId]);
    return { media: { id: mediaId, kind: 'video', contentType, size, sha256 } };
  });
}
