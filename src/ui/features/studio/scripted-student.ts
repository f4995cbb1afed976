/**
 * An offline stand-in student for calibrating a generated question/answer environment without a
 * model: it reads the file's TASKS (question → reference answer) and answers by a transparent rule
 * on the kind of answer — a number it always knows, a capitalised name it knows half the time, any
 * other answer never. Over K rollouts that gives the three calibration labels (too easy, learnable,
 * too hard) on the studio's heuristic tasks. It is a rule, not a model, and says so in the docs.
 */
import { ScriptedClient, type ChatClient, type Task } from '../../../envs/index.ts';

/** How often the student knows `answer`: 1 for a number, ½ for a capitalised name, 0 otherwise. */
export function studentKnows(answer: string): number {
  const text = answer.trim();
  if (/^\d[\d.,]*$/.test(text)) return 1;
  if (/^\p{Lu}\p{Ll}+$/u.test(text)) return 0.5;
  return 0;
}

/** The student as a ChatClient: for a known question it answers "Answer: <reference>" with probability `studentKnows`, else "Answer: I do not know". */
export function scriptedStudent(tasks: readonly Task[], seed = 0): ChatClient {
  const answers = new Map(tasks.filter((task) => task.question !== undefined).map((task) => [task.question!, task.answer ?? '']));
  let state = seed >>> 0;
  const random = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return new ScriptedClient((messages) => {
    const question = messages.filter((message) => message.role === 'user').at(-1)?.content ?? '';
    const answer = answers.get(question);
    return answer !== undefined && random() < studentKnows(answer) ? `Answer: ${answer}` : 'Answer: I do not know';
  });
}
