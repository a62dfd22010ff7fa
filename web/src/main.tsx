import { render } from 'preact';
import { App } from './components/App.js';
import './styles/app.css';

// The service worker (vite-plugin-pwa) makes the app start offline. Browsers offer it only in
// secure contexts (https, localhost); elsewhere the app runs online and says so (App).
if (import.meta.env.PROD && 'serviceWorker' in navigator) {
  addEventListener('load', () => void navigator.serviceWorker.register('/sw.js'));
  // A notification's "Done" or "Snooze" made offline is sent now (web/public/reminder-push.js).
  const sendReminderActions = () =>
    void navigator.serviceWorker.ready.then((registration) =>
      registration.active?.postMessage({ type: 'reminder-actions' }),
    );
  addEventListener('load', sendReminderActions);
  addEventListener('online', sendReminderActions);
}

render(<App />, document.getElementById('app')!);
