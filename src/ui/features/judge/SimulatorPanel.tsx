/**
 * The tool simulator card: who answers the tools of an environment with simulated tools (lesson 7's
 * file, the Studio's trace and planted-task files) — the scripted nearest-record simulator offline,
 * the Judge card's model, the Policy card's model, or an endpoint of its own. The choice is lent to
 * every run's environment as `args.simulatorClient` (with `args.simulatorModel`), as the judge is as
 * `args.judgeClient`; its calls come back out of the sandbox to this page, so a key stays here. The
 * same control sits in the Studio's Simulated tools card.
 */
import { EndpointFields } from '../../kit/EndpointFields.tsx';
import { usePlayground } from '../../store/index.ts';
import { chooseSimulator, setSimulatorApiKey, setSimulatorEndpoint, simulatorLabel } from './simulator-actions.ts';
import { readSimulatorApiKey } from './simulator-key.ts';
import type { SimulatorKind } from './simulator-slice.ts';

/** The simulator's select, its endpoint fields when it is an endpoint, and what is lent. */
export function SimulatorChoice({ testId }: { testId: string }) {
  const kind = usePlayground((state) => state.simulator.kind);
  const label = usePlayground(() => simulatorLabel());
  return (
    <>
      <label>
        Simulator
        <select value={kind} data-testid={testId} onChange={(event) => chooseSimulator(event.target.value as SimulatorKind)}>
          <option value="heuristic">Scripted (nearest recorded call, offline)</option>
          <option value="judge">The judge's model (Judge card)</option>
          <option value="policy">The policy's model (Policy card)</option>
          <option value="endpoint">OpenAI-compatible endpoint</option>
        </select>
      </label>
      {kind === 'endpoint' && <SimulatorEndpointFields />}
      <p className="hint" data-testid={`${testId}-lent`}>
        {kind === 'heuristic' ? (
          <>
            Nothing is lent: a file with simulated tools answers them with its own scripted simulator. Pick a model here and each run's environment gets it as <code>args.simulatorClient</code>.
          </>
        ) : (
          <>
            Each run's environment gets {label} as <code>args.simulatorClient</code>; its calls come back to this page, so a key stays here. The run records which simulator it had.
          </>
        )}
      </p>
    </>
  );
}

function SimulatorEndpointFields() {
  const baseURL = usePlayground((state) => state.simulator.baseURL);
  const model = usePlayground((state) => state.simulator.model);
  const hasApiKey = usePlayground((state) => state.simulator.hasApiKey);
  return (
    <EndpointFields
      baseURL={baseURL}
      model={model}
      hasApiKey={hasApiKey}
      readApiKey={readSimulatorApiKey}
      onEndpointChange={setSimulatorEndpoint}
      onApiKeyChange={setSimulatorApiKey}
      testIdPrefix="simulator"
      hint="The simulator's key stays in this browser's local storage and is sent only to this URL. The environment gets a simulator whose calls come back to this page: the key never enters the sandbox."
    />
  );
}

/** The side pane's tool simulator card, shown for a file that takes a simulator (`simulatorClient`) or once one is chosen. */
export function SimulatorPanel() {
  const takesSimulator = usePlayground((state) => state.environments.find((item) => item.id === state.currentId)?.source.includes('simulatorClient') ?? false);
  const chosen = usePlayground((state) => state.simulator.kind !== 'heuristic');
  if (!takesSimulator && !chosen) return null;
  return (
    <section className="card" aria-labelledby="simulator-heading" data-testid="simulator-panel">
      <h2 id="simulator-heading">Tool simulator</h2>
      <SimulatorChoice testId="simulator-kind" />
    </section>
  );
}
