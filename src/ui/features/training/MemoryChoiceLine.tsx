/** The line under the GRPO settings that says what the latest step chose from the GPU memory budget (WebGPU only). */
import { usePlayground } from '../../store/index.ts';

/** The latest GRPO step's micro-batch, its accounted memory within the budget, and why one more sequence does not fit; nothing until a WebGPU step reports it. */
export function MemoryChoiceLine() {
  const choice = usePlayground((state) => state.memoryChoice);
  if (choice === null) return null;
  return (
    <p className="hint" data-testid="memory-choice">
      Latest step: <b>{choice.microBatch}</b> sequences per backward pass at {choice.T} tokens, {choice.stepMiB} of the {choice.budgetMiB} MiB budget; not one more: {choice.reason}.
    </p>
  );
}
