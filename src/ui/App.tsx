/** The playground shell: the screens of src/ui grow here. */
export function App() {
  return (
    <main>
      <h1>TabRL</h1>
      <p>Reinforcement learning for language-model agents, in a browser tab.</p>
    </main>
  );
}
