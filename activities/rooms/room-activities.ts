import { DataSource } from 'typeorm';
import { agentContext, beginRun, executeEffect, failRun, proposeEffect } from '../../db/rooms/agent-run-steps';
import { agentOutputFits, parseCompiled } from '../../db/rules/room-rules';
import { compileInput, failCompile, finishCompile } from '../../db/rooms/documents';
import { beginJob, runJob } from '../../db/rooms/jobs';
import { missPromise } from '../../db/rooms/promises';
import { systemLine } from '../../db/rules/ai-answers';
import { Config } from '../../runtime/config';
import { AI_INVALID_OUTPUT, aiFailure, chatProvider } from '../ai/openai-chat';

export interface RoomActivityDeps {
  dataSource: DataSource;
  config: Config;
  stopping?: AbortSignal;
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
  assistant: 'You are the assistant of a shared product room. Answer the request in plain text (at most 4000 characters), using only the room\'s messages ' +
    'and canvas.',
  editor: 'You edit the room\'s canvas, a Markdown document. Answer with the whole new canvas in Markdown (at most 100000 characters) and nothing else.',
} as const;

/**
 * The steps of `agent-run/<runId>`, `room-job/<jobId>` and `room-promise/<promiseId>`; database steps are idempotent, the model call is bounded by the
 * workflow.
 */
export function createRoomActivities({ dataSource: ds, config, stopping }: RoomActivityDeps) {
  const provider = chatProvider({ baseUrl: config.aiBaseUrl, apiKey: config.aiApiKey, model: config.aiModel, timeoutMs: config.aiTimeoutMs, stopping });
  const chat = async (system: string, user: unknown, json: boolean) => (await provider.chat({ system, user, json })).content;

  return {
    /** The compile's model call: the evidence with ids; an answer that is not the JSON asked for is retried. */
    async callCompileModel(documentId: string): Promise<string> {
      const input = await compileInput(ds, documentId);
      const content = await chat(`${systemLine(COMPILE_PROGRAM)}\n${COMPILE_INSTRUCTIONS}`,
        { title: input.title, maxStatements: input.maxStatements, evidence: input.evidence }, true);
      if (!parseCompiled(content)) throw aiFailure(AI_INVALID_OUTPUT, 'the model\'s answer is not the document JSON');
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
     * One model call (the brain of docs/rooms.md#agent-runs-and-approvals): the last 50 messages the starter may see and the canvas;
     * the first choice's text, trimmed, must fit the alias's side effect. Answers the text and the
     * canvas version it read.
     */
    async callAgentModel(runId: string): Promise<{ output: string; canvasVersion: number }> {
      const context = await agentContext(ds, runId);
      const content = await chat(`${systemLine(AGENT_PROGRAMS[context.alias])}\n${INSTRUCTIONS[context.alias]}`,
        { request: context.input, messages: context.messages, canvas: context.canvas.content }, false);
      const output = (content ?? '').trim();
      if (!agentOutputFits(context.alias, output)) {
        throw aiFailure(AI_INVALID_OUTPUT, `the model's answer does not fit the ${context.alias}'s action`);
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

    async beginRoomJob(jobId: string) {
      return beginJob(ds, jobId);
    },

    async runRoomJob(jobId: string) {
      return runJob(ds, jobId);
    },

    async missRoomPromise(promiseId: string) {
      return missPromise(ds, promiseId);
    },
  };
}
