import { render } from 'preact';

function App() {
  return <main>Notes</main>;
}

render(<App />, document.getElementById('app')!);
