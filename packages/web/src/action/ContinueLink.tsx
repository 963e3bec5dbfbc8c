import { webContinueUrl } from './link';

/** "Continue" to the link's continueUrl, when it has a web address. */
export function ContinueLink({ continueUrl }: { continueUrl: string | null }) {
  const href = webContinueUrl(continueUrl);
  if (!href) return null;
  return (
    <p>
      <a href={href}>Continue</a>
    </p>
  );
}
