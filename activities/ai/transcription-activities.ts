import { ApplicationFailure } from '@temporalio/activity';
import OpenAI, { toFile } from 'openai';
import { DataSource } from 'typeorm';
import { failCaptions, recordAutomaticCaptions } from '../../db/collection/captions';
import { CollectionMedia, CollectionUpload } from '../../db/entities';
import { automaticVttProblem } from '../../db/rules/captions';
import { Config, transcriptionConfigured } from '../../runtime/config';
import { mediaStoreOf, readAll } from '../../runtime/media-store';
import { AI_INVALID_OUTPUT, AI_NOT_CONFIGURED, AI_PROVIDER_ERROR, AI_REQUEST_REFUSED, AI_TIMEOUT } from './ai-activities';

export interface TranscriptionActivityDeps {
  config: Config;
  dataSource: DataSource;
}

const EXTENSIONS: Record<string, string> = {
  'audio/mpeg': 'mp3', 'audio/mp4': 'm4a', 'audio/ogg': 'ogg', 'audio/wav': 'wav', 'audio/webm': 'webm',
  'video/mp4': 'mp4', 'video/quicktime': 'mov', 'video/webm': 'webm',
};

/**
 * Captions through the provider layer: the OpenAI-compatible audio transcription endpoint
 * (`POST {TRANSCRIBE_BASE_URL}/audio/transcriptions`, `response_format: vtt`), typed failures as the
 * AI operations have them (AI.md §1), and the track's record.
 */
export function createTranscriptionActivities({ config, dataSource }: TranscriptionActivityDeps) {
  let client: OpenAI | null = null;
  const store = mediaStoreOf(config);
  return {
    async transcribeRecording(sessionId: string): Promise<string> {
      if (!transcriptionConfigured(config)) {
        throw ApplicationFailure.create({ message: 'transcription is off (TRANSCRIBE_BASE_URL, TRANSCRIBE_MODEL)', type: AI_NOT_CONFIGURED, nonRetryable: true });
      }
      client ??= new OpenAI({ baseURL: config.transcribeBaseUrl, apiKey: config.transcribeApiKey ?? 'unset', timeout: config.aiTimeoutMs, maxRetries: 0 });
      const upload = await dataSource.getRepository(CollectionUpload).findOneBy({ id: sessionId });
      const media = upload?.assetId ? await dataSource.getRepository(CollectionMedia).findOneBy({ id: upload.assetId }) : null;
      if (!media || media.erasedAt) {
        throw ApplicationFailure.create({ message: 'the recording is gone', type: AI_REQUEST_REFUSED, nonRetryable: true });
      }
      const bytes = await readAll(await store.read(media.storageKey));
      let vtt: unknown;
      try {
        vtt = await client.audio.transcriptions.create({
          file: await toFile(bytes, `recording.${EXTENSIONS[media.contentType] ?? 'bin'}`, { type: media.contentType }),
          model: config.transcribeModel!,
          response_format: 'vtt',
        });
      } catch (err) {
        if (err instanceof OpenAI.APIConnectionTimeoutError) {
          throw ApplicationFailure.create({ message: 'the transcription provider did not answer in time', type: AI_TIMEOUT });
        }
        const status = err instanceof OpenAI.APIError ? err.status : undefined;
        if (status !== undefined && status >= 400 && status < 500 && status !== 408 && status !== 429) {
          throw ApplicationFailure.create({ message: `the transcription provider refused the request (HTTP ${status})`, type: AI_REQUEST_REFUSED, nonRetryable: true });
        }
        throw ApplicationFailure.create({ message: `the transcription provider failed: ${status ? `HTTP ${status}` : (err as Error).message}`, type: AI_PROVIDER_ERROR });
      }
      const problem = automaticVttProblem(vtt);
      if (problem) throw ApplicationFailure.create({ message: `the transcription was malformed: ${problem}`, type: AI_INVALID_OUTPUT });
      return (vtt as string).replace(/^\uFEFF/, '');
    },
    async recordCaptionTrack(sessionId: string, vtt: string): Promise<void> {
      await recordAutomaticCaptions(dataSource, sessionId, vtt);
    },
    async failCaptionTrack(sessionId: string, reason: string): Promise<void> {
      await failCaptions(dataSource, sessionId, reason);
    },
  };
}
