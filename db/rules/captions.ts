/** Captions as WebVTT (docs/collection.md#customers): corrected cues become a track; an automatic track is checked. Pure. */

export interface CaptionCue {
  startMs: number;
  endMs: number;
  text: string;
}

/** The longest automatic track we keep; a longer answer is treated as malformed. */
export const MAX_VTT_CHARS = 1_000_000;

function timestamp(ms: number): string {
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = Math.floor((ms % 60_000) / 1000);
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${pad(h)}:${pad(m)}:${pad(s)}.${pad(ms % 1000, 3)}`;
}

/**
 * Escapes a cue's text for WebVTT: `&`, `<` and `>` become entities (so `-->` cannot end a cue line),
 * and blank lines, which would end the cue, collapse.
 */
export function escapeCueText(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
    .replace(/\r\n?/g, '\n').split('\n').map((l) => l.trim()).filter(Boolean).join('\n');
}

/** The first problem of a cue list, or null: each cue ends after it starts, has text, and none starts before the previous. */
export function cueProblem(cues: CaptionCue[]): string | null {
  for (let i = 0; i < cues.length; i++) {
    const c = cues[i];
    if (c.endMs <= c.startMs) return `cues[${i}].endMs must be after startMs`;
    if (escapeCueText(c.text) === '') return `cues[${i}].text must not be blank`;
    if (i > 0 && c.startMs < cues[i - 1].startMs) return `cues[${i}] starts before the cue ahead of it`;
  }
  return null;
}

/** A WebVTT document of the cues; `language` is noted in the header. */
export function cuesToVtt(cues: CaptionCue[], language?: string): string {
  const header = language ? `WEBVTT\nLanguage: ${language.replace(/[^A-Za-z0-9-]/g, '')}\n` : 'WEBVTT\n';
  return [header, ...cues.map((c) => `${timestamp(c.startMs)} --> ${timestamp(c.endMs)}\n${escapeCueText(c.text)}\n`)].join('\n');
}

/** A provider's track is kept only when it is WebVTT and of a sane length; anything else is malformed. */
export function automaticVttProblem(vtt: unknown): string | null {
  if (typeof vtt !== 'string') return 'the answer is not text';
  const text = vtt.replace(/^\uFEFF/, '');
  if (!/^WEBVTT(?:[ \t][^\n]*)?(?:\r?\n|$)/.test(text)) return 'the answer is not WebVTT';
  if (text.length > MAX_VTT_CHARS) return `the track is longer than ${MAX_VTT_CHARS} characters`;
  if (!text.includes('-->')) return 'the track has no cues';
  return null;
}
