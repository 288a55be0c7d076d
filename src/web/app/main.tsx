import { render } from 'preact';
import { App } from './app';
import { loadPageConfig } from './lib/config';
import { startRouter } from './lib/router';
import { loadSession, restoreWallet } from './lib/session';
import './styles.css';

const root = document.getElementById('app')!;

startRouter();
restoreWallet();
// The session check and the page settings load beside the first render (and the page's own
// data): nothing waits for them in turn. The header keeps a slot for the account.
loadSession().catch(() => undefined);
loadPageConfig().catch(() => undefined);
// The boot text is plain HTML, not Preact's: clear it before the first render.
root.textContent = '';
render(<App />, root);
