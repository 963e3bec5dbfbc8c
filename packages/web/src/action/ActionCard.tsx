import type { ReactNode } from 'react';

/** The action page's card, with the page's one heading. */
export function ActionCard({ title, children }: { title: string; children: ReactNode }) {
  return (
    <section className="card" aria-labelledby="action-heading">
      <h1 id="action-heading">{title}</h1>
      {children}
    </section>
  );
}
