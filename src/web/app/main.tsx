import { render, type ComponentChild } from 'preact';
import { App } from './app';
import { ErrorBox } from './components/states';
import { asApiError } from './lib/api';
import { loadPageConfig } from './lib/config';
import { startRouter } from './lib/router';
import { loadSession, restoreWallet } from './lib/session';
import './styles.css';

const root = document.getElementById('app')!;
// The boot text is plain HTML, not Preact's: clear it before the first render.
const mount = (node: ComponentChild) => {
  root.textContent = '';
  render(node, root);
};

startRouter();
restoreWallet();
// The session check runs beside the first render; the header keeps a slot for it.
loadSession().catch(() => undefined);
loadPageConfig().then(
  () => mount(<App />),
  (error) =>
    mount(
      <main class="container">
        <h1>Skill Market</h1>
        <ErrorBox error={asApiError(error)} title="The marketplace could not start" retry={() => window.location.reload()} />
      </main>,
    ),
);
