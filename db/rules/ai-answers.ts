import { SENTIMENT_VALUES, SummaryAnswer } from './ai-summary-validator';
import { CaseStudyAnswer } from './ai-case-study-validator';

/**
 * The provider's side of docs/ai.md#connecting-a-provider, docs/ai.md#the-validator: the programs, the answer schemas a model must return,
 * and the model evaluation baseline. Pure.
 */

export const AI_PROGRAMS = {
  summarize: { id: 'proof-summary', version: '1.0.0' },
  ask_draft: { id: 'proof-ask-draft', version: '1.0.0' },
  case_study: { id: 'proof-case-study', version: '1.0.0' },
  signal_analysis: { id: 'signal-analysis', version: '1.0.0' },
} as const;
export type AiProgramKey = keyof typeof AI_PROGRAMS;

/** The system message's first line names the program exactly; instructions follow. */
export const systemLine = (program: { id: string; version: string }) => `program: ${program.id}@${program.version}`;

export class MalformedAnswer extends Error {}

const fail = (why: string): never => {
  throw new MalformedAnswer(why);
};

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

function text(v: unknown, max: number, what: string): string {
  if (typeof v !== 'string' || v.length < 1 || v.length > max) fail(`${what} must be a string of 1 to ${max} characters`);
  return v as string;
}

function list(v: unknown, min: number, max: number, what: string): unknown[] {
  if (!Array.isArray(v) || v.length < min || v.length > max) fail(`${what} must be a list of ${min} to ${max}`);
  return v as unknown[];
}

/** The answer as JSON; empty or not a JSON object is malformed. */
export function parseJsonObject(content: string | null | undefined): Record<string, unknown> {
  if (!content || !content.trim()) fail('empty answer');
  let value: unknown;
  try {
    value = JSON.parse(content!);
  } catch {
    fail('not JSON');
  }
  if (!isObject(value)) fail('not a JSON object');
  return value as Record<string, unknown>;
}

/** §3 summarize; extra fields are ignored. */
export function parseSummary(content: string | null | undefined): SummaryAnswer {
  const v = parseJsonObject(content);
  if (!SENTIMENT_VALUES.includes(v.sentiment as SummaryAnswer['sentiment'])) fail('sentiment');
  return {
    sentiment: v.sentiment as SummaryAnswer['sentiment'],
    sentences: list(v.sentences, 1, 8, 'sentences').map((s, i) => ({ text: text(isObject(s) ? s.text : undefined, 500, `sentences[${i}].text`) })),
    caveats: list(v.caveats ?? fail('caveats'), 0, 6, 'caveats').map((c, i) => ({ text: text(isObject(c) ? c.text : undefined, 300, `caveats[${i}].text`) })),
  };
}

export function parseAskDraft(content: string | null | undefined): { subject: string; body: string } {
  const v = parseJsonObject(content);
  return { subject: text(v.subject, 150, 'subject'), body: text(v.body, 4000, 'body') };
}

export function parseCaseStudy(content: string | null | undefined): CaseStudyAnswer {
  const v = parseJsonObject(content);
  return {
    title: text(v.title, 150, 'title'),
    sections: list(v.sections, 1, 8, 'sections').map((s, i) => {
      if (!isObject(s)) fail(`sections[${i}]`);
      const section = s as Record<string, unknown>;
      return {
        heading: text(section.heading, 120, `sections[${i}].heading`),
        statements: list(section.statements, 1, 30, `sections[${i}].statements`).map((st, j) => {
          if (!isObject(st)) fail(`sections[${i}].statements[${j}]`);
          const statement = st as Record<string, unknown>;
          return {
            text: text(statement.text, 1000, `sections[${i}].statements[${j}].text`),
            citations: list(statement.citations, 0, 5, `sections[${i}].statements[${j}].citations`).map((c) => {
              if (!isObject(c) || typeof c.sourceVersionId !== 'string' || (c.quote !== null && typeof c.quote !== 'string')) {
                return fail(`sections[${i}].statements[${j}].citations`);
              }
              return { sourceVersionId: c.sourceVersionId, quote: c.quote as string | null };
            }),
          };
        }),
      };
    }),
  };
}

export interface ModelInfo {
  provider: string;
  name: string;
  resolved: string | null;
  evaluated: boolean;
  needsHumanReview: boolean;
  reviewReason: 'model_unevaluated' | 'resolved_model_unknown' | null;
  reviewMessage: string | null;
}

/** §3: a model outside the evaluation baseline is flagged for a person, never blocked. */
export function modelInfo(baseUrl: string, name: string, resolved: string | null | undefined, evaluatedModels: string[]): ModelInfo {
  const resolvedName = resolved ? resolved : null;
  const listed = evaluatedModels.includes(name);
  const evaluated = listed && resolvedName !== null && (resolvedName === name || evaluatedModels.includes(resolvedName));
  const reviewReason = !listed ? 'model_unevaluated' : !evaluated ? 'resolved_model_unknown' : null;
  const reviewMessage = reviewReason === 'model_unevaluated'
    ? `The model ${name} is not in the evaluation baseline; a person should review this answer.`
    : reviewReason === 'resolved_model_unknown'
      ? `The provider did not confirm that the evaluated model ${name} answered (it reported ${resolvedName ?? 'no model'}); a person should review this answer.`
      : null;
  return { provider: new URL(baseUrl).host, name, resolved: resolvedName, evaluated, needsHumanReview: !evaluated, reviewReason, reviewMessage };
}
