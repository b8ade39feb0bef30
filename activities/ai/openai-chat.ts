import { ApplicationFailure, Context } from '@temporalio/activity';
import OpenAI from 'openai';
import { heartbeating, rethrowIfCancelled } from '../platform/activity-cancellation';

/** Failure types of the provider activities; docs/ai.md#connecting-a-provider names them as `reason`. */
export const AI_NOT_CONFIGURED = 'not_configured';
export const AI_INVALID_OUTPUT = 'malformed_output';
export const AI_REQUEST_REFUSED = 'refused';
export const AI_PROVIDER_ERROR = 'provider_error';
export const AI_TIMEOUT = 'timeout';

/** The activity's attempt number (1 outside an activity), carried in failures so the workflow can report it. */
export function attempt(): number {
  try {
    return Context.current().info.attempt;
  } catch {
    return 1;
  }
}

/** A typed failure of a provider activity; `details` carries the attempt. */
export function aiFailure(type: string, message: string, nonRetryable = false): ApplicationFailure {
  return ApplicationFailure.create({ message, type, nonRetryable, details: [attempt()] });
}

/**
 * Maps a failed call of the OpenAI client to its reason: a timeout, a refusal (a 4xx other than 408 and
 * 429, not retried) or a provider error (network, 408, 429, 5xx: retried). `provider` names it in the message.
 */
export function providerFailure(err: unknown, provider = 'AI provider'): ApplicationFailure {
  if (err instanceof OpenAI.APIConnectionTimeoutError) return aiFailure(AI_TIMEOUT, `the ${provider} did not answer in time`);
  const status = err instanceof OpenAI.APIError ? err.status : undefined;
  if (status !== undefined && status >= 400 && status < 500 && status !== 408 && status !== 429) {
    return aiFailure(AI_REQUEST_REFUSED, `the ${provider} refused the request (HTTP ${status})`, true);
  }
  return aiFailure(AI_PROVIDER_ERROR, `the ${provider} failed: ${status ? `HTTP ${status}` : (err as Error).message}`);
}

export interface ChatProviderSettings {
  baseUrl: string | undefined;
  apiKey: string | undefined;
  model: string | undefined;
  timeoutMs: number;
  /** Aborted when the worker's shutdown grace is over (see `heartbeating`). */
  stopping?: AbortSignal;
}

/**
 * One OpenAI-compatible chat provider (`POST {baseUrl}/chat/completions`, npm `openai`, no client
 * retries: the workflows bound them). Unconfigured, every call fails `not_configured` (not retried).
 */
export function chatProvider(settings: ChatProviderSettings) {
  let client: OpenAI | null = null;
  const configured = () => {
    if (!settings.baseUrl || !settings.model) {
      throw aiFailure(AI_NOT_CONFIGURED, 'no AI provider is configured (AI_BASE_URL, AI_MODEL)', true);
    }
    client ??= new OpenAI({ baseURL: settings.baseUrl, apiKey: settings.apiKey ?? 'unset', timeout: settings.timeoutMs, maxRetries: 0 });
    return { client, model: settings.model, baseUrl: settings.baseUrl };
  };

  /**
   * One chat completion at temperature 0, optionally a JSON object answer; failures typed by reason. The
   * call heartbeats and is abandoned when the activity is cancelled or its worker stops: the attempt
   * then fails as cancelled (not as a provider error) and Temporal retries it on another worker.
   */
  async function chat(request: { system: string; user: unknown; json: boolean; timeoutMs?: number }) {
    const { client: ai, model } = configured();
    return heartbeating(async (signal) => {
      try {
        const completion = await ai.chat.completions.create({
          model,
          temperature: 0,
          ...(request.json ? { response_format: { type: 'json_object' as const } } : {}),
          messages: [{ role: 'system', content: request.system }, { role: 'user', content: JSON.stringify(request.user) }],
        }, { signal, ...(request.timeoutMs === undefined ? {} : { timeout: request.timeoutMs }) });
        return { content: completion.choices?.[0]?.message?.content, resolved: completion.model };
      } catch (err) {
        rethrowIfCancelled(signal);
        throw providerFailure(err);
      }
    }, settings.stopping);
  }

  return { configured, chat };
}
