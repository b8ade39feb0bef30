import { validationFailed } from '../../runtime/service-error';
import type { QuestionKind } from '../entities/collection-question-version';

export interface QuestionText {
  text: string;
  kind: QuestionKind;
  helpText?: string;
  options?: string[];
}

/** A PATCH: any of the fields; `helpText: null` removes it. */
export type QuestionChange = Partial<Omit<QuestionText, 'helpText'>> & { helpText?: string | null };

export const OPTIONS_RULE = 'a choice question needs 2 to 10 options, and only a choice question has options';
export const choiceOptionsAgree = (q: { kind?: string; options?: unknown }) => (q.kind === 'choice') === (q.options !== undefined);

/**
 * The next version: the latest one with the change laid over it. Options belong to a choice question,
 * so a change of kind away from choice drops the carried options.
 */
export function mergeQuestionChange(latest: QuestionText, change: QuestionChange): QuestionText {
  const kind = change.kind ?? latest.kind;
  const helpText = change.helpText === undefined ? latest.helpText : change.helpText ?? undefined;
  const options = change.options ?? (kind === 'choice' ? latest.options : undefined);
  const next: QuestionText = { text: change.text ?? latest.text, kind, helpText, options };
  if (!choiceOptionsAgree(next)) throw validationFailed([{ path: 'options', message: OPTIONS_RULE }]);
  return next;
}
