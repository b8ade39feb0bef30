import OpenAI, { toFile } from 'openai';
import { DataSource } from 'typeorm';
import { failCaptions, recordAutomaticCaptions } from '../../db/collection/captions';
import { CollectionMedia, CollectionUpload } from '../../db/entities';
import { automaticVttProblem } from '../../db/rules/captions';
import { Config, transcriptionConfigured } from '../../runtime/config';
import { mediaStoreOf, readAll } from '../../runtime/media-store';
import { AI_INVALID_OUTPUT, AI_NOT_CONFIGURED, AI_REQUEST_REFUSED, aiFailure, providerFailure } from './openai-chat';
import { heartbeating, rethrowIfCancelled } from '../platform/activity-cancellation';

export interface TranscriptionActivityDeps {
  config: Config;
  dataSource: DataSource;
  stopping?: AbortSignal;
}

const EXTENSIONS: Record<string, string> = {
  'audio/mpeg': 'mp3', 'audio/mp4': 'm4a', 'audio/ogg': 'ogg', 'audio/wav': 'wav', 'audio/webm': 'webm',
  'video/mp4': 'mp4', 'video/quicktime': 'mov', 'video/webm': 'webm',
};

/**
 * Captions through the provider layer: the OpenAI-compatible audio transcription endpoint
 * (`POST {TRANSCRIBE_BASE_URL}/audio/transcriptions`, `response_format: vtt`), typed failures as the
 * AI operations have them (docs/ai.md#operation-records), and the track's record.
 */
export function createTranscriptionActivities({ config, dataSource, stopping }: TranscriptionActivityDeps) {
  let client: OpenAI | null = null;
  const store = mediaStoreOf(config);
  return {
    async transcribeRecording(sessionId: string): Promise<string> {
      if (!transcriptionConfigured(config)) {
        throw aiFailure(AI_NOT_CONFIGURED, 'transcription is off (TRANSCRIBE_BASE_URL, TRANSCRIBE_MODEL)', true);
      }
      client ??= new OpenAI({ baseURL: config.transcribeBaseUrl, apiKey: config.transcribeApiKey ?? 'unset', timeout: config.aiTimeoutMs, maxRetries: 0 });
      const upload = await dataSource.getRepository(CollectionUpload).findOneBy({ id: sessionId });
      const media = upload?.assetId ? await dataSource.getRepository(CollectionMedia).findOneBy({ id: upload.assetId }) : null;
      if (!media || media.erasedAt) {
        throw aiFailure(AI_REQUEST_REFUSED, 'the recording is gone', true);
      }
      const bytes = await readAll(await store.read(media.storageKey));
      const file = await toFile(bytes, `recording.${EXTENSIONS[media.contentType] ?? 'bin'}`, { type: media.contentType });
      const vtt: unknown = await heartbeating(async (signal) => {
        try {
          return await client!.audio.transcriptions.create({ file, model: config.transcribeModel!, response_format: 'vtt' }, { signal });
        } catch (err) {
          rethrowIfCancelled(signal);
          throw providerFailure(err, 'transcription provider');
        }
      }, stopping);
      const problem = automaticVttProblem(vtt);
      if (problem) throw aiFailure(AI_INVALID_OUTPUT, `the transcription was malformed: ${problem}`);
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
