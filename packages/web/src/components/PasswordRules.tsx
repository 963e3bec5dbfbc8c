import { validatePassword, type Auth, type PasswordPolicy, type PasswordValidationStatus } from 'firebase/auth';
import { useEffect, useState } from 'react';

interface Rule {
  text: string;
  met: (status: PasswordValidationStatus) => boolean | undefined;
}

/** Google's bounds, which every password meets or is refused whatever the policy says. */
const floor = 6;
const ceiling = 4096;

/**
 * The password rules the server applies, as a checklist shown before typing and ticked while
 * typing: the project's password policy (served at /v2/passwordPolicy, read by the SDK's
 * validatePassword) when it is enforced, else only the server's own floor of 6 characters (a
 * policy that is not enforced refuses nothing, so listing it would mislead).
 */
export function PasswordRules({ auth, password }: { auth: Auth; password: string }) {
  const [status, setStatus] = useState<PasswordValidationStatus | null>(null);
  useEffect(() => {
    let current = true;
    validatePassword(auth, password).then(
      (next) => current && setStatus(next),
      () => current && setStatus(null),
    );
    return () => {
      current = false;
    };
  }, [auth, password]);
  if (!status) return null;
  const enforced = status.passwordPolicy.enforcementState === 'ENFORCE';
  const options: PasswordPolicy['customStrengthOptions'] = enforced ? status.passwordPolicy.customStrengthOptions : { minPasswordLength: floor };
  const rules: Rule[] = [
    { text: `At least ${options.minPasswordLength ?? floor} characters`, met: (s) => (enforced ? s.meetsMinPasswordLength : password.length >= floor) },
  ];
  if (options.maxPasswordLength !== undefined && options.maxPasswordLength < ceiling) rules.push({ text: `At most ${options.maxPasswordLength} characters`, met: (s) => s.meetsMaxPasswordLength });
  if (options.containsLowercaseLetter) rules.push({ text: 'A lowercase letter', met: (s) => s.containsLowercaseLetter });
  if (options.containsUppercaseLetter) rules.push({ text: 'An uppercase letter', met: (s) => s.containsUppercaseLetter });
  if (options.containsNumericCharacter) rules.push({ text: 'A number', met: (s) => s.containsNumericCharacter });
  if (options.containsNonAlphanumericCharacter) rules.push({ text: 'A symbol', met: (s) => s.containsNonAlphanumericCharacter });
  return (
    <ul className="password-rules" aria-label="Password rules">
      {rules.map((rule) => {
        const met = password !== '' && rule.met(status) === true;
        return (
          <li key={rule.text} data-met={String(met)}>
            <span aria-hidden="true">{met ? '✓' : '○'}</span> {rule.text}
          </li>
        );
      })}
    </ul>
  );
}
