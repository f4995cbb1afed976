/**
 * The red team: an attacker (the offline heuristic attacker, or the Policy or Judge card's model)
 * searches for replies the open environment's reward pays without the task being done — propose,
 * score with the environment's own rubric, keep the best, mutate — on its first evaluation task;
 * a reviewer says in hindsight whether each high-scoring reply earned it. Back doors are listed with
 * their reply, reward, the function that paid and the verdict; "Turn into criteria" gates the reward
 * with criteria that catch them.
 */
import { usePlayground } from '../../store/index.ts';
import { currentEnvironment } from '../environment/current-environment.ts';
import { RoleSelect } from './RoleSelect.tsx';
import { cancelRedTeam, redTeamToCriteria, setAttacker, setRedTeamBudget, setReviewer, startRedTeam } from './red-team-actions.ts';
import { type StudioRoleSource } from './studio-slice.ts';

/** The red-team card. */
export function RedTeamPanel({ onOpened }: { onOpened: () => void }) {
  const attacker = usePlayground((state) => state.studio.attacker);
  const reviewer = usePlayground((state) => state.studio.reviewer);
  const rounds = usePlayground((state) => state.studio.redTeamRounds);
  const population = usePlayground((state) => state.studio.redTeamPopulation);
  const redTeam = usePlayground((state) => state.studio.redTeam);
  const { report } = redTeam;
  const running = redTeam.status === 'running';
  // P replies in the first round, then P − ⌈P/2⌉ new ones per round (the kept half stays).
  const budget = population + (rounds - 1) * (population - Math.ceil(population / 2));

  return (
    <>
      <section className="card" aria-labelledby="redteam-heading">
        <h2 id="redteam-heading">Red team the reward</h2>
        <p className="hint">
          Before training, look for back doors: replies the reward pays well without the task done, which a policy would otherwise find by itself. Each reply is scored by a real rollout of the
          environment&apos;s first evaluation task (the Judge card&apos;s judge lent as in an evaluation); the reviewer then reads the high-scoring ones.
        </p>
        <div className="studio-row">
          <RoleSelect label="Attacker" value={attacker} onChange={setAttacker} testId="redteam-attacker" />
          <label>
            Reviewer
            <select value={reviewer} data-testid="redteam-reviewer" onChange={(event) => setReviewer(event.target.value as StudioRoleSource | 'none')}>
              <option value="heuristic">Offline heuristic judge</option>
              <option value="policy">The policy (Policy card)</option>
              <option value="judge">The judge (Judge card)</option>
              <option value="none">None (list high scores unreviewed)</option>
            </select>
          </label>
          <label>
            Rounds
            <input type="number" min={1} max={100} value={rounds} data-testid="redteam-rounds" onChange={(event) => setRedTeamBudget({ rounds: Number(event.target.value) })} />
          </label>
          <label>
            Population
            <input type="number" min={1} max={100} value={population} data-testid="redteam-population" onChange={(event) => setRedTeamBudget({ population: Number(event.target.value) })} />
          </label>
          <span className="hint">{budget} attacker calls</span>
        </div>
        <div className="studio-row">
          {running ? (
            <button type="button" onClick={cancelRedTeam} data-testid="redteam-cancel">
              Stop ({redTeam.scored} scored)
            </button>
          ) : (
            <button type="button" className="primary" disabled={!currentEnvironment()} onClick={() => void startRedTeam()} data-testid="redteam-start">
              Search for back doors
            </button>
          )}
        </div>
        {redTeam.error && (
          <p className="failure" role="alert" data-testid="redteam-error">
            {redTeam.error}
          </p>
        )}
        {report && (
          <p className="summary-line" data-testid="redteam-summary">
            <span className="chip">{report.candidates.length} replies tried</span>
            <span className="chip">best reward {report.bestReward.toFixed(3)}</span>
            <span className="chip">
              calls: attacker {report.calls.attacker}, scoring {report.calls.scoring}, reviewer {report.calls.reviewer}
            </span>
            <span className={report.backDoors.length > 0 ? 'chip chip-bad' : 'chip'}>
              {report.backDoors.length} back door{report.backDoors.length === 1 ? '' : 's'}
              {report.firstBackDoorAtCall !== null ? ` (first after ${report.firstBackDoorAtCall} attacker calls)` : ''}
            </span>
          </p>
        )}
      </section>
      {report && (
        <section className="card" aria-labelledby="backdoors-heading">
          <h2 id="backdoors-heading">Back doors</h2>
          {report.backDoors.length === 0 ? (
            <p className="hint" data-testid="redteam-clean">
              {report.earned.length > 0
                ? `No back door: the reviewer found all ${report.earned.length} high-scoring replies earned.`
                : `No back door: no reply reached a high reward (≥ ${report.highReward.toFixed(2)}).`}
            </p>
          ) : (
            <div className="table-scroll">
              <table className="studio-table" data-testid="redteam-backdoors">
                <thead>
                  <tr>
                    <th>Reply</th>
                    <th>Reward</th>
                    <th>Paid by</th>
                    <th>Verdict</th>
                  </tr>
                </thead>
                <tbody>
                  {report.backDoors.map((finding) => (
                    <tr key={`${finding.task}:${finding.call}`} data-testid="redteam-backdoor">
                      <td>{finding.reply.length > 200 ? `${finding.reply.slice(0, 200)}…` : finding.reply}</td>
                      <td className="num">{finding.reward.toFixed(3)}</td>
                      <td>
                        <code>{finding.payingFunction ?? 'nothing'}</code>
                      </td>
                      <td>
                        <b>{finding.verdict}</b>
                        {finding.reason ? `: ${finding.reason}` : ''}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
          {report.backDoors.length > 0 && (
            <div className="studio-row">
              <button type="button" onClick={() => void redTeamToCriteria().then((opened) => opened && onOpened())} data-testid="redteam-criteria">
                Turn into criteria
              </button>
            </div>
          )}
          {redTeam.criteriaNote && (
            <p className="hint" data-testid="redteam-criteria-note">
              {redTeam.criteriaNote}
            </p>
          )}
          {redTeam.criteriaSnippet && <pre className="snippet">{redTeam.criteriaSnippet}</pre>}
        </section>
      )}
    </>
  );
}
