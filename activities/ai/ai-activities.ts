import { DataSource } from 'typeorm';
import { OperationInput, completeOperation, failOperation } from '../../db/ai/ai-operations';
import { AnalysisJob, AnalysisResult, SENTIMENTS, URGENCIES } from '../../db/customer-loop/signal-analysis';
import { ProofAiOperation } from '../../db/entities';
import {
  AI_PROGRAMS, MalformedAnswer, modelInfo, parseAskDraft, parseCaseStudy, parseJsonObject, parseSummary, systemLine,
} from '../../db/rules/ai-answers';
import { signalSummaryAllowed } from '../../db/rules/ai-validator';
import { Config } from '../../runtime/config';
import { aiOperations } from '../../runtime/metrics';
import { AI_INVALID_OUTPUT, AI_REQUEST_REFUSED, aiFailure, chatProvider } from './openai-chat';

export interface AiActivityDeps {
  config: Config;
  dataSource?: DataSource;
}

const SUMMARY_MAX = 500;

const INSTRUCTIONS: Record<string, string> = {
  'signal-analysis': [
    'You triage customer feedback for a software product. Answer with one JSON object and nothing else:',
    '{"sentiment": "positive" | "mixed" | "neutral" | "negative",',
    ' "urgency": "low" | "medium" | "high" | "critical",',
    ' "summary": one sentence restating only what the customer wrote, without new facts or numbers,',
    ' "candidateFeatureIds": ids from the given features that this feedback is evidence for (may be empty)}',
  ].join('\n'),
  'proof-summary': [
    'Summarize one customer story. Use only facts and numbers in the story; never add a number, a name, a company,',
    'a title or an e-mail address. Caveats must state the incentive (if any), the verification state and the consent limits given.',
    'Answer with one JSON object: {"sentiment": "positive"|"mixed"|"neutral"|"negative", "sentences": [{"text"}] (1 to 8),',
    '"caveats": [{"text"}] (0 to 6)}.',
  ].join('\n'),
  'proof-ask-draft': [
    'Draft a request asking a customer to share their story. Never make a reward depend on a positive answer, never ask only',
    'happy customers, never add a number that is not in the input, and state any incentive disclosure exactly as given.',
    'Answer with one JSON object: {"subject": up to 150 characters, "body": up to 4000 characters}.',
  ].join('\n'),
  'proof-case-study': [
    'Compile a case study from the given sources only. Every statement cites the sourceVersionId it comes from; a quote',
    'in double quotes must be copied exactly and given as the citation quote. Never add a number, name or company.',
    'Answer with one JSON object: {"title", "sections": [{"heading", "statements": [{"text", "citations": [{"sourceVersionId", "quote": string|null}]}]}]}.',
  ].join('\n'),
};

const invalid = (why: string) => aiFailure(AI_INVALID_OUTPUT, `the model's answer failed validation: ${why}`);

/**
 * Checks the model's answer field by field. Links may only name features that were offered, so the
 * model cannot invent one; a summary with a number the signal does not contain, or an e-mail
 * address, is dropped (docs/customer-loop.md#signal-analysis); anything else malformed fails the attempt rather than being repaired.
 */
export function validateAnalysis(text: string | null | undefined, job: AnalysisJob): AnalysisResult {
  let value: Record<string, unknown>;
  try {
    value = parseJsonObject(text);
  } catch (err) {
    throw invalid((err as Error).message);
  }
  const { sentiment, urgency, summary, candidateFeatureIds } = value;
  if (!SENTIMENTS.includes(sentiment as AnalysisResult['sentiment'])) throw invalid('sentiment');
  if (!URGENCIES.includes(urgency as AnalysisResult['urgency'])) throw invalid('urgency');
  if (typeof summary !== 'string' || summary.trim().length === 0 || summary.length > SUMMARY_MAX) throw invalid('summary');
  if (!Array.isArray(candidateFeatureIds) || !candidateFeatureIds.every((id) => typeof id === 'string')) throw invalid('candidateFeatureIds');
  const offered = new Set(job.features.map((f) => f.id));
  return {
    sentiment: sentiment as AnalysisResult['sentiment'],
    urgency: urgency as AnalysisResult['urgency'],
    summary: signalSummaryAllowed(summary, job) ? summary.trim() : null,
    candidateFeatureIds: [...new Set(candidateFeatureIds as string[])].filter((id) => offered.has(id)),
  };
}

const PARSERS = { summarize: parseSummary, ask_draft: parseAskDraft, case_study: parseCaseStudy };

/** Calls to the AI provider (any OpenAI-compatible endpoint). The workflows bound the retries. */
export function createAiActivities({ config, dataSource }: AiActivityDeps) {
  const { configured, chat: complete } = chatProvider({ baseUrl: config.aiBaseUrl, apiKey: config.aiApiKey, model: config.aiModel,
    timeoutMs: config.aiTimeoutMs });

  /** One chat completion (docs/ai.md#connecting-a-provider): a JSON object answer, the program on the system message's first line. */
  const chat = async (program: { id: string; version: string }, user: unknown, timeoutMs: number) => {
    try {
      const answer = await complete({ system: `${systemLine(program)}\n${INSTRUCTIONS[program.id]}`, user, json: true, timeoutMs });
      aiOperations.inc({ operation: program.id, outcome: 'succeeded' });
      return answer;
    } catch (err) {
      aiOperations.inc({ operation: program.id, outcome: 'failed' });
      throw err;
    }
  };

  const db = () => {
    if (!dataSource) throw new Error('AI operation activities need the DataSource');
    return dataSource;
  };

  return {
    async analyzeSignal(job: AnalysisJob): Promise<AnalysisResult> {
      const { content } = await chat(AI_PROGRAMS.signal_analysis,
        { category: job.category, title: job.title, body: job.body, features: job.features }, config.aiTimeoutMs);
      return validateAnalysis(content, job);
    },

    /** Asks the provider for an operation's answer and checks its shape (§3); malformed answers are retried. */
    async callAiProvider(operationId: string, timeoutMs: number): Promise<{ answer: unknown; resolved: string | null }> {
      const op = await db().getRepository(ProofAiOperation).findOneByOrFail({ id: operationId });
      // A late start of an operation that already ended (its API gave up on Temporal) asks the provider nothing.
      if (op.status !== 'running') throw aiFailure(AI_REQUEST_REFUSED, `the operation is ${op.status}, not running`, true);
      const input = op.input as unknown as OperationInput;
      const { content, resolved } = await chat(op.program, input.user, timeoutMs);
      try {
        return { answer: PARSERS[input.operation](content), resolved: resolved || null };
      } catch (err) {
        if (err instanceof MalformedAnswer) throw invalid(err.message);
        throw err;
      }
    },

    async completeAiOperation(operationId: string, answer: unknown, resolved: string | null, evaluatedModels: string[]): Promise<string> {
      const { model, baseUrl } = configured();
      return completeOperation(db(), operationId, answer, modelInfo(baseUrl, model, resolved, evaluatedModels));
    },

    async failAiOperation(operationId: string, reason: string, attempts: number): Promise<void> {
      await failOperation(db(), operationId, { code: 'AI_UNAVAILABLE', reason, attempts });
    },
  };
}
