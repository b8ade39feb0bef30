import type { FlowView, StoryValues } from './views';

/** The story form's values from its fields (FormData in the browser, the posted body on the server). */
export function valuesFromEntries(entries: Iterable<[string, string]>, flow: FlowView): StoryValues {
  const v: StoryValues = { answers: {}, identityFields: [], channels: [] };
  for (const [name, value] of entries) {
    if (name === 'identityFields' || name === 'channels') v[name]!.push(value);
    else if (name.startsWith('q.')) {
      const q = flow.questions.find((x) => x.questionId === name.slice(2));
      if (q && value !== '') v.answers![q.questionId] = q.kind === 'yes_no' ? value === 'yes' : value;
    } else if (name === 'rating') v.rating = value === '' ? undefined : Number(value);
    else if (name === 'consent') v.consent = value === 'yes';
    else if (['text', 'title', 'name', 'email', 'company', 'jobTitle', 'location', 'displayMode'].includes(name)) {
      (v as Record<string, unknown>)[name] = value;
    }
  }
  return v;
}

/** The draft PATCH body (COLLECTION.md §3.1) for the form's values; a cleared answer is removed (null). */
export function patchOf(v: StoryValues, flow: FlowView): Record<string, unknown> {
  const patch: Record<string, unknown> = { text: v.text ?? '', title: v.title ?? '', consentAccepted: v.consent === true };
  if (v.rating !== undefined && Number.isInteger(v.rating)) patch.rating = v.rating;
  const answers: Record<string, string | boolean | null> = {};
  for (const q of flow.questions) answers[q.questionId] = v.answers?.[q.questionId] ?? null;
  if (flow.questions.length) patch.answers = answers;
  const identity: Record<string, string> = {};
  for (const [field, key] of [['name', 'name'], ['company', 'company'], ['title', 'jobTitle'], ['location', 'location'], ['email', 'email']] as const) {
    const value = v[key] ?? '';
    if (value !== '' || field === 'name') identity[field] = value;
  }
  patch.identity = identity;
  if (v.displayMode) patch.displayMode = v.displayMode;
  patch.identityFields = v.identityFields ?? [];
  if (v.channels?.length) patch.publication = { channels: v.channels };
  return patch;
}

/** The form's values from a stored draft (resuming, or a request pre-filled from the recipient). */
export function valuesOfDraft(d: Record<string, any>): StoryValues {
  const identity = d.identity ?? {};
  return {
    text: d.text, title: d.title, rating: d.rating, answers: Object.fromEntries(Object.entries(d.answers ?? {})
      .filter(([, a]) => a !== null)) as StoryValues['answers'],
    name: identity.name, email: identity.email, company: identity.company, jobTitle: identity.title, location: identity.location,
    displayMode: d.displayMode, identityFields: d.identityFields, channels: d.publication?.channels, consent: d.consentAccepted,
  };
}

/** Which form field an API refusal is about, from the words of its message (null: shown at the top). */
export function fieldOfMessage(message: string, flow: FlowView): string | null {
  const m = message.toLowerCase();
  for (const q of flow.questions) if (m.includes(q.questionId.toLowerCase()) || m.includes(q.text.toLowerCase())) return `q.${q.questionId}`;
  const rules: Array<[RegExp, string]> = [
    [/identity\.email|e-?mail/, 'email'], [/identity\.name|\bname\b/, 'name'], [/identity\.company|company/, 'company'],
    [/identity\.title/, 'jobTitle'], [/location/, 'location'], [/rating/, 'rating'], [/consent/, 'consent'], [/channel|publication/, 'channels'],
    [/\btitle\b/, 'title'], [/\btext\b|story|characters/, 'text'],
  ];
  return rules.find(([re]) => re.test(m))?.[1] ?? null;
}
