/**
 * Questions of planted tasks written by a generator model from the planted end state: the model
 * sees the tools, the records planted for the task and what the task must lead to (the field whose
 * planted value is the answer, or the write to make), and writes the question a user would ask. A
 * question is used only when it names every value the agent needs to start (the entry arguments,
 * and for a write the values to set) and, for a task with an answer, does not give the answer away;
 * otherwise the template question stays, and the task says which it got (`questionSource`). A
 * generator that fails throws. Offline, the templates of planting.ts are the questions.
 */
import type { ChatClient } from '../client.ts';
import type { ToolSchema } from '../types.ts';
import { errorMessage } from '../../common/error-message.ts';
import type { PlantedTask } from './planting.ts';

/** What writing questions needs: the generator model and the tools the agent will have. */
export interface PlantedQuestionOptions {
  generator: ChatClient;
  generatorModel?: string;
  tools: readonly ToolSchema[];
  signal?: AbortSignal;
}

/** A planted task's question as a generator writes it, or why the template stays. */
export interface WrittenQuestion {
  task: PlantedTask;
  /** The reason the generator's question was not used (the template stays), when it was not. */
  refused?: string;
}

/** The values a question must name: the entry call's arguments, and for a write the values to set. */
export function requiredMentions(task: PlantedTask): string[] {
  const entry = task.records[0]!;
  const values = Object.values(entry.arguments);
  if (task.goal) values.push(...Object.values(task.goal.arguments).slice(1));
  // A chain or write starts from the listing: its new id is what the agent must find, so the question does not name it.
  const hidden = task.kind === 'field' ? [] : Object.values(task.records[1]?.arguments ?? {});
  return [...new Set(values.filter((value) => !hidden.includes(value)).map((value) => (typeof value === 'string' ? value : JSON.stringify(value))))];
}

/** The generator's prompt for one planted task. */
export function plantedQuestionPrompt(task: PlantedTask, tools: readonly ToolSchema[]): string {
  const goal = task.goal
    ? `The agent must make this change: call ${task.goal.tool} with ${JSON.stringify(task.goal.arguments)}. Ask for the change; the reply will be "done".`
    : `The answer is the value of "${task.field}" in the last record (${JSON.stringify(task.answer)}). Ask for it without stating it; the reply will be the value alone.`;
  return [
    'Write the question a customer would send to a support agent that has the tools below. The agent finds what it needs only by calling them, in the order of the records.',
    `Tools:\n${tools.map((tool) => `- ${tool.function.name}: ${tool.function.description ?? ''}`).join('\n')}`,
    `Records the backend holds for this task, in the order the agent reaches them:\n${task.records.map((record) => `${record.tool}(${JSON.stringify(record.arguments)}) -> ${record.result}`).join('\n')}`,
    goal,
    `The question must contain these values exactly as written: ${requiredMentions(task)
      .map((value) => JSON.stringify(value))
      .join(', ')}.${task.kind === 'field' ? '' : ' Do not name the id the first call finds.'}`,
    'Reply with the question alone.',
  ].join('\n\n');
}

/** Asks the generator for each task's question and keeps it where it passes the checks (see the module comment). */
export async function writePlantedQuestions(tasks: readonly PlantedTask[], options: PlantedQuestionOptions): Promise<WrittenQuestion[]> {
  const written: WrittenQuestion[] = [];
  for (const task of tasks) {
    let reply: string;
    try {
      const completion = await options.generator.chat.completions.create({
        model: options.generatorModel ?? 'default',
        messages: [{ role: 'user', content: plantedQuestionPrompt(task, options.tools) }],
        temperature: 0,
        max_tokens: 300,
        ...(options.signal ? { signal: options.signal } : {}),
      });
      reply = completion.choices[0]?.message.content ?? '';
    } catch (error) {
      throw new Error(
        `the generator failed while writing the question of planted task ${task.id}: ${errorMessage(error)}; check the generator endpoint and model name, or leave out --generator-* to keep the template questions`,
      );
    }
    const question = reply
      .trim()
      .replace(/^"(.*)"$/s, '$1')
      .trim();
    const refused = questionProblem(task, question);
    written.push(refused ? { task: { ...task, questionSource: 'template' }, refused } : { task: { ...task, question, questionSource: 'generator' } });
  }
  return written;
}

/** Why a generated question cannot replace the template, or undefined when it can. */
function questionProblem(task: PlantedTask, question: string): string | undefined {
  if (question === '') return 'the generator gave an empty question';
  const lower = question.toLowerCase();
  const missing = requiredMentions(task).filter((value) => !lower.includes(value.toLowerCase()));
  if (missing.length > 0) return `the question does not name ${missing.map((value) => JSON.stringify(value)).join(', ')}`;
  if (!task.goal && lower.includes(task.answer.toLowerCase())) return `the question gives the answer away (${JSON.stringify(task.answer)})`;
  return undefined;
}
