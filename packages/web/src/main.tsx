import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App';
import { startAuth } from './firebase';
import { completeRedirect } from './redirect';
import { preloadPageFor } from './lazy-pages';
import './styles.css';

const container = document.getElementById('root');
if (!container) throw new Error('index.html has no #root');
const root = createRoot(container);
root.render(<p className="loading">Loading…</p>);
const landing = preloadPageFor(window.location.pathname);

// The redirect result is read exactly once per page load, before React (whose StrictMode runs
// effects twice) renders anything.
startAuth().then(
  async ({ auth, providers }) => {
    const redirect = await completeRedirect(auth);
    await landing;
    root.render(
      <StrictMode>
        <App auth={auth} providers={providers} redirect={redirect} />
      </StrictMode>,
    );
  },
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
