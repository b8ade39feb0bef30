import { ApplicationFailure } from '@temporalio/activity';
import OpenAI from 'openai';
import { AnalysisJob, AnalysisResult, SENTIMENTS, URGENCIES } from '../../db/customer-loop/signal-analysis';
import { Config } from '../../runtime/config';

export interface AiActivityDeps {
  config: Config;
}

export const AI_NOT_CONFIGURED = 'AI_NOT_CONFIGURED';
export const AI_INVALID_OUTPUT = 'AI_INVALID_OUTPUT';
export const AI_REQUEST_REFUSED = 'AI_REQUEST_REFUSED';
const SUMMARY_MAX = 500;

const SYSTEM_PROMPT = [
  'You triage customer feedback for a software product. Answer with one JSON object and nothing else:',
  '{"sentiment": "positive" | "mixed" | "neutral" | "negative",',
  ' "urgency": "low" | "medium" | "high" | "critical",',
  ' "summary": one sentence restating only what the customer wrote, without new facts or numbers,',
  ' "candidateFeatureIds": ids from the given features that this feedback is evidence for (may be empty)}',
].join('\n');

const invalid = (why: string) => ApplicationFailure.retryable(`the model's answer failed validation: ${why}`, AI_INVALID_OUTPUT);

/**
 * Checks the model's answer field by field. Links may only name features that were offered, so the
 * model cannot invent one; anything else malformed fails the attempt rather than being repaired.
 */
export function validateAnalysis(text: string | null | undefined, job: AnalysisJob): AnalysisResult {
  if (!text) throw invalid('empty answer');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw invalid('not JSON');
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw invalid('not a JSON object');
  const { sentiment, urgency, summary, candidateFeatureIds } = value as Record<string, unknown>;
  if (!SENTIMENTS.includes(sentiment as AnalysisResult['sentiment'])) throw invalid('sentiment');
  if (!URGENCIES.includes(urgency as AnalysisResult['urgency'])) throw invalid('urgency');
  if (typeof summary !== 'string' || summary.trim().length === 0 || summary.length > SUMMARY_MAX) throw invalid('summary');
  if (!Array.isArray(candidateFeatureIds) || !candidateFeatureIds.every((id) => typeof id === 'string')) throw invalid('candidateFeatureIds');
  const offered = new Set(job.features.map((f) => f.id));
  return {
    sentiment: sentiment as AnalysisResult['sentiment'],
    urgency: urgency as AnalysisResult['urgency'],
    summary: summary.trim(),
    candidateFeatureIds: [...new Set(candidateFeatureIds as string[])].filter((id) => offered.has(id)),
  };
}

/** Calls to the AI provider (any OpenAI-compatible endpoint). The workflow bounds the retries. */
export function createAiActivities({ config }: AiActivityDeps) {
  let client: OpenAI | null = null;
  const provider = () => {
    if (!config.aiBaseUrl || !config.aiModel) {
      throw ApplicationFailure.nonRetryable('no AI provider is configured (AI_BASE_URL, AI_MODEL)', AI_NOT_CONFIGURED);
    }
    client ??= new OpenAI({ baseURL: config.aiBaseUrl, apiKey: config.aiApiKey ?? 'unset', timeout: config.aiTimeoutMs, maxRetries: 0 });
    return { client, model: config.aiModel };
  };

  return {
    async analyzeSignal(job: AnalysisJob): Promise<AnalysisResult> {
      const { client: ai, model } = provider();
      let text: string | null | undefined;
      try {
        const completion = await ai.chat.completions.create({
          model,
          temperature: 0,
          response_format: { type: 'json_object' },
          messages: [
            { role: 'system', content: SYSTEM_PROMPT },
            { role: 'user', content: JSON.stringify({ category: job.category, title: job.title, body: job.body, features: job.features }) },
          ],
        });
        text = completion.choices[0]?.message?.content;
      } catch (err) {
        // A refused request (bad key, unknown model) will not succeed on retry; overload and outages may.
        const status = err instanceof OpenAI.APIError ? err.status : undefined;
        if (status !== undefined && status >= 400 && status < 500 && status !== 408 && status !== 429) {
          throw ApplicationFailure.nonRetryable(`the AI provider refused the request (HTTP ${status})`, AI_REQUEST_REFUSED);
        }
        throw ApplicationFailure.retryable(`the AI provider failed: ${status ? `HTTP ${status}` : (err as Error).message}`, 'AI_UNAVAILABLE');
      }
      return validateAnalysis(text, job);
    },
  };
}
