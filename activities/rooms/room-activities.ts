import { ApplicationFailure } from '@temporalio/activity';
import OpenAI from 'openai';
import { DataSource } from 'typeorm';
import { agentContext, beginRun, executeEffect, failRun, proposeEffect } from '../../db/rooms/agent-runs';
import { agentOutputFits, parseCompiled } from '../../db/rules/room-rules';
import { compileInput, failCompile, finishCompile } from '../../db/rooms/documents';
import { systemLine } from '../../db/rules/ai-answers';
import { Config } from '../../runtime/config';
import { mediaStoreOf } from '../../runtime/media-store';
import { sweepUnattachedAttachments } from '../../db/rooms/attachments';
import { AI_INVALID_OUTPUT, AI_NOT_CONFIGURED, AI_PROVIDER_ERROR, AI_REQUEST_REFUSED, AI_TIMEOUT } from '../ai/ai-activities';

export interface RoomActivityDeps {
  dataSource: DataSource;
  config: Config;
}

const AGENT_PROGRAMS = {
  assistant: { id: 'room-assistant', version: '1.0.0' },
  editor: { id: 'room-editor', version: '1.0.0' },
} as const;
const COMPILE_PROGRAM = { id: 'room-compile', version: '1.0.0' } as const;
const COMPILE_INSTRUCTIONS = [
  'Write a product requirements document from the given evidence only. Every statement cites the ids of the evidence it',
  'comes from; never cite anything else and never add a fact, number or name the evidence does not contain.',
  'Answer with one JSON object: {"title", "statements": [{"section", "text", "citations": [id]}]}.',
].join('\n');

const INSTRUCTIONS = {
  assistant: 'You are the assistant of a shared product room. Answer the request in plain text (at most 4000 characters), using only the room\'s messages and canvas.',
  editor: 'You edit the room\'s canvas, a Markdown document. Answer with the whole new canvas in Markdown (at most 100000 characters) and nothing else.',
} as const;

/** The steps of `agent-run/<runId>` and the attachment sweep; database steps are idempotent, the model call is bounded by the workflow. */
export function createRoomActivities({ dataSource: ds, config }: RoomActivityDeps) {
  let client: OpenAI | null = null;
  const provider = () => {
    if (!config.aiBaseUrl || !config.aiModel) {
      throw ApplicationFailure.create({ message: 'no AI provider is configured (AI_BASE_URL, AI_MODEL)', type: AI_NOT_CONFIGURED, nonRetryable: true });
    }
    client ??= new OpenAI({ baseURL: config.aiBaseUrl, apiKey: config.aiApiKey ?? 'unset', timeout: config.aiTimeoutMs, maxRetries: 0 });
    return { ai: client, model: config.aiModel };
  };

  /** One chat completion at temperature 0; failures typed by reason, only those a retry may cure retryable. */
  async function chat(system: string, user: unknown, json: boolean): Promise<string | null | undefined> {
    const { ai, model } = provider();
    try {
      const completion = await ai.chat.completions.create({
        model,
        temperature: 0,
        ...(json ? { response_format: { type: 'json_object' as const } } : {}),
        messages: [{ role: 'system', content: system }, { role: 'user', content: JSON.stringify(user) }],
      });
      return completion.choices?.[0]?.message?.content;
    } catch (err) {
      if (err instanceof OpenAI.APIConnectionTimeoutError) throw ApplicationFailure.create({ message: 'the AI provider did not answer in time', type: AI_TIMEOUT });
      const status = err instanceof OpenAI.APIError ? err.status : undefined;
      if (status !== undefined && status >= 400 && status < 500 && status !== 408 && status !== 429) {
        throw ApplicationFailure.create({ message: `the AI provider refused the request (HTTP ${status})`, type: AI_REQUEST_REFUSED, nonRetryable: true });
      }
      throw ApplicationFailure.create({ message: `the AI provider failed: ${status ? `HTTP ${status}` : (err as Error).message}`, type: AI_PROVIDER_ERROR });
    }
  }

  return {
    /** The compile's model call: the evidence with ids; an answer that is not the JSON asked for is retried. */
    async callCompileModel(documentId: string): Promise<string> {
      const input = await compileInput(ds, documentId);
      const content = await chat(`${systemLine(COMPILE_PROGRAM)}\n${COMPILE_INSTRUCTIONS}`,
        { title: input.title, maxStatements: input.maxStatements, evidence: input.evidence }, true);
      if (!parseCompiled(content)) throw ApplicationFailure.create({ message: 'the model\'s answer is not the document JSON', type: AI_INVALID_OUTPUT });
      return content!;
    },

    async finishRoomCompile(documentId: string, content: string): Promise<string> {
      return finishCompile(ds, documentId, content, { provider: new URL(config.aiBaseUrl!).host, name: config.aiModel! });
    },

    async failRoomCompile(documentId: string): Promise<void> {
      await failCompile(ds, documentId);
    },

    async beginAgentRun(runId: string): Promise<boolean> {
      return beginRun(ds, runId);
    },

    /**
     * One model call (the brain of ROOMS.md §6): the last 50 messages the starter may see and the canvas;
     * the first choice's text, trimmed, must fit the alias's side effect. Answers the text and the
     * canvas version it read.
     */
    async callAgentModel(runId: string): Promise<{ output: string; canvasVersion: number }> {
      const context = await agentContext(ds, runId);
      const content = await chat(`${systemLine(AGENT_PROGRAMS[context.alias])}\n${INSTRUCTIONS[context.alias]}`,
        { request: context.input, messages: context.messages, canvas: context.canvas.content }, false);
      const output = (content ?? '').trim();
      if (!agentOutputFits(context.alias, output)) {
        throw ApplicationFailure.create({ message: `the model's answer does not fit the ${context.alias}'s action`, type: AI_INVALID_OUTPUT });
      }
      return { output, canvasVersion: context.canvas.version };
    },

    async failAgentRun(runId: string, code: string, message: string): Promise<void> {
      await failRun(ds, runId, code, message);
    },

    async proposeAgentEffect(runId: string, output: string, canvasVersion: number, approvalTtlMs: number) {
      return proposeEffect(ds, runId, output, canvasVersion, approvalTtlMs);
    },

    async executeAgentEffect(runId: string, expire: boolean) {
      return executeEffect(ds, runId, expire);
    },

    /** The maintenance round's sweep of room uploads no message took within 24 h, bytes included. */
    async sweepRoomAttachments(): Promise<number> {
      return sweepUnattachedAttachments(ds, mediaStoreOf(config));
    },
  };
}
