import { createHash } from 'node:crypto';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

/**
 * A principal's id in the rooms of one product (`prn_…`): derived, so it is the same in every room
 * and needs no lookup table, and opaque, since it is a digest of the product and the principal.
 */
export function principalIdOf(productId: string, type: 'end_user' | 'teammate' | 'agent', id: string): string {
  const digest = createHash('sha256').update(`${productId}\u0000${type}\u0000${id}`).digest();
  let out = '';
  for (let i = 0; i < 26; i += 1) out += ALPHABET[digest[i] & 31];
  return `prn_${out}`;
}

export type RoomStatusValue = 'open' | 'waiting' | 'resolved' | 'archived';

/** docs/rooms.md#room-states: open ⇄ waiting; open/waiting → resolved → open; any → archived (final). */
export function roomStatusMoveAllowed(from: RoomStatusValue, to: RoomStatusValue): boolean {
  if (from === to) return true;
  if (from === 'archived') return false;
  if (to === 'archived') return true;
  if (from === 'open') return to === 'waiting' || to === 'resolved';
  if (from === 'waiting') return to === 'open' || to === 'resolved';
  return to === 'open';
}

/**
 * The snapshot rule of GET /events (docs/rooms.md#the-event-log-snapshot-and-catch-up, after Matrix /sync's `limited` timeline): no `after`,
 * too far behind, or behind what compaction removed.
 */
export function needsSnapshot(after: number | undefined, headSeq: number, threshold: number, compactedThrough: number): boolean {
  if (after === undefined) return true;
  if (headSeq - after > threshold) return true;
  return after < compactedThrough;
}

/** Who reads a room's log: customers see customer entries and the internal ones about themselves. */
export interface RoomReader {
  internal: boolean;
  principalId: string | null;
}

export function eventVisibleTo(
  reader: RoomReader, event: { visibility: 'customer' | 'internal'; audiencePrincipalId: string | null },
): boolean {
  if (reader.internal || event.visibility === 'customer') return true;
  return reader.principalId !== null && event.audiencePrincipalId === reader.principalId;
}

/** The agent aliases of every room (docs/rooms.md#agent-runs-and-approvals) and what their answer becomes. */
export const AGENT_ALIASES = ['assistant', 'editor'] as const;
export type AgentAlias = (typeof AGENT_ALIASES)[number];
export const MESSAGE_BODY_MAX = 4000;
export const CANVAS_CONTENT_MAX = 100_000;

/** `assistant` posts a message (approval only when customer-visible); `editor` rewrites the canvas, always approved. */
export function sideEffectOf(alias: AgentAlias, visibility: 'customer' | 'internal') {
  if (alias === 'assistant') return { action: 'post_message' as const, needsApproval: visibility === 'customer' };
  return { action: 'update_canvas' as const, needsApproval: true };
}

/** Whether the model's first choice, trimmed, fits what the alias's side effect writes. */
export function agentOutputFits(alias: AgentAlias, text: string): boolean {
  if (alias === 'assistant') return text.length >= 1 && text.length <= MESSAGE_BODY_MAX;
  return text.length <= CANVAS_CONTENT_MAX;
}

export interface CompiledStatement {
  section: string;
  text: string;
  citations: string[];
}

export type RemovedReason = 'unknown' | 'internal' | 'not_evidence';

/**
 * Keeps only citations of the evidence the model was shown (docs/rooms.md#compile-and-promote); each removed one says why
 * (an internal message, another existing id, or nothing known); a statement left uncited is rejected.
 */
export function checkCitations(
  statements: CompiledStatement[],
  evidence: Map<string, 'message' | 'signal'>,
  reasonOf: (id: string) => RemovedReason,
  maxStatements: number,
) {
  const kept: Array<{ section: string; text: string; citations: Array<{ type: 'message' | 'signal'; id: string }> }> = [];
  const rejected: Array<{ text: string; reason: 'no_valid_citation' }> = [];
  const removedCitations: Array<{ id: string; reason: RemovedReason }> = [];
  for (const statement of statements.slice(0, maxStatements)) {
    const valid = [...new Set(statement.citations)].filter((id) => {
      if (evidence.has(id)) return true;
      removedCitations.push({ id, reason: reasonOf(id) });
      return false;
    });
    if (valid.length === 0) rejected.push({ text: statement.text, reason: 'no_valid_citation' });
    else kept.push({ section: statement.section, text: statement.text, citations: valid.map((id) => ({ type: evidence.get(id)!, id })) });
  }
  return { statements: kept, rejected, removedCitations };
}

/** The model's answer to a compile, or null when it is not the JSON asked for. */
export function parseCompiled(content: string | null | undefined): { title: string; statements: CompiledStatement[] } | null {
  let value: unknown;
  try {
    value = JSON.parse(content ?? '');
  } catch {
    return null;
  }
  const v = value as { title?: unknown; statements?: unknown } | null;
  if (!v || typeof v !== 'object' || typeof v.title !== 'string' || !Array.isArray(v.statements)) return null;
  const statements: CompiledStatement[] = [];
  for (const s of v.statements as Array<Record<string, unknown>>) {
    if (!s || typeof s !== 'object' || typeof s.section !== 'string' || typeof s.text !== 'string' || s.text.trim() === '') return null;
    if (!Array.isArray(s.citations) || !s.citations.every((c) => typeof c === 'string')) return null;
    statements.push({ section: s.section, text: s.text, citations: s.citations as string[] });
  }
  return { title: v.title, statements };
}

export const MAX_REACTION_EMOJI = 20;

/** A reaction's emoji: 1–32 characters (code points), no whitespace or control characters. */
export function emojiValid(emoji: string): boolean {
  const length = [...emoji].length;
  return length >= 1 && length <= 32 && !/[\s\p{Cc}]/u.test(emoji);
}

export const POLL_OPTIONS_MIN = 2;
export const POLL_OPTIONS_MAX = 10;
export const POLL_OPTION_MAX = 100;
export const MESSAGE_ATTACHMENTS_MAX = 10;
/** An upload no message took within this long is erased by the maintenance sweep (docs/configuration.md). */
export const UNATTACHED_ATTACHMENT_TTL_MS = 24 * 3_600_000;
const ATTACHMENT_FILENAME_MAX = 200;
export const ATTACHMENT_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'application/pdf', 'text/plain'] as const;
export type AttachmentType = (typeof ATTACHMENT_TYPES)[number];

/**
 * The declared `content-type` of an upload: one of the accepted types (text/plain only as UTF-8, the
 * default when no charset is named), or the reason it is not.
 */
export function declaredAttachmentType(header: string | undefined): { type: AttachmentType } | { problem: string } {
  if (!header) return { problem: 'send the file\'s content-type' };
  const [essence, ...params] = header.split(';').map((part) => part.trim().toLowerCase());
  const type = ATTACHMENT_TYPES.find((t) => t === essence);
  if (!type) return { problem: `must be one of ${ATTACHMENT_TYPES.join(', ')}` };
  const charset = params.map((p) => /^charset="?([^"]*)"?$/.exec(p)?.[1]).find((c) => c !== undefined);
  if (charset !== undefined && (type !== 'text/plain' || charset !== 'utf-8')) return { problem: 'only text/plain takes a charset, and only utf-8' };
  return { type };
}

/**
 * Whether the bytes are what was declared, judged as they stream in: the type the sniffer (file-type)
 * found in the head must be the declared one; text/plain has no magic bytes, so it must sniff as nothing
 * binary and every chunk be valid UTF-8 (a character may span two chunks) without NUL.
 */
export function attachmentTypeCheck(type: AttachmentType) {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const text = type === 'text/plain';
  return {
    head: (sniffedMime: string | undefined): boolean => (text ? sniffedMime === undefined : sniffedMime === type),
    chunk(bytes: Buffer): boolean {
      if (!text) return true;
      try {
        decoder.decode(bytes, { stream: true });
      } catch {
        return false;
      }
      return !bytes.includes(0);
    },
    end(): boolean {
      if (!text) return true;
      try {
        decoder.decode();
        return true;
      } catch {
        return false;
      }
    },
  };
}

/** An `x-filename` header: at most 200 characters, no control characters; absent is null. */
export function filenameProblem(filename: string): string | null {
  if (filename.length < 1 || filename.length > ATTACHMENT_FILENAME_MAX) return `must be 1–${ATTACHMENT_FILENAME_MAX} characters`;
  if (/\p{Cc}/u.test(filename)) return 'must not contain control characters';
  return null;
}

/** `content-disposition: attachment` with an ASCII fallback name and the exact one per RFC 6266 / RFC 8187. */
export function attachmentDisposition(filename: string | null): string {
  if (filename === null) return 'attachment';
  const fallback = filename.replace(/[^\x20-\x7e]|["\\%]/g, '_');
  const exact = encodeURIComponent(filename).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${fallback}"; filename*=UTF-8''${exact}`;
}

/** A case still `open` whose distinct reporters reached the threshold hides its message (docs/rooms.md#reactions-attachments-polls-and-moderation). */
export function reportsHide(state: string, reportCount: number, threshold: number): boolean {
  return state === 'open' && reportCount >= threshold;
}
