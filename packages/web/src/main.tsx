import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App';
import { startAuth } from './firebase';
import './styles.css';

const container = document.getElementById('root');
if (!container) throw new Error('index.html has no #root');
const root = createRoot(container);
root.render(<p className="loading">Loading…</p>);

startAuth().then(
  (auth) =>
    root.render(
      <StrictMode>
        <App auth={auth} />
      </StrictMode>,
    ),
  (error: unknown) => {
    console.error(error);
    root.render(
      <main>
        <p role="alert" className="alert">
          Could not load this site’s settings from the server. Please reload the page.
        </p>
      </main>,
    );
  },
);
