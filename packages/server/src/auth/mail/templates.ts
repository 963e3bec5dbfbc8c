import type { OobRequestType } from '../../storage/store.js';

export interface MailContent {
  subject: string;
  text: string;
  html: string;
}

interface Wording {
  subject: string;
  /** Paragraphs before the link; `%APP%` is the project name, `%EMAIL%` the address concerned. */
  body: string[];
  action: string;
  ignore: string;
}

type Catalogue = Record<OobRequestType, Wording>;

const en: Catalogue = {
  PASSWORD_RESET: {
    subject: 'Reset your password for %APP%',
    body: ['Hello,', 'Follow this link to reset your %APP% password for your %EMAIL% account.'],
    action: 'Reset password',
    ignore: "If you didn't ask to reset your password, you can ignore this email.",
  },
  VERIFY_EMAIL: {
    subject: 'Verify your email for %APP%',
    body: ['Hello,', 'Follow this link to verify your email address.'],
    action: 'Verify email',
    ignore: "If you didn't ask to verify this address, you can ignore this email.",
  },
  EMAIL_SIGNIN: {
    subject: 'Sign in to %APP%',
    body: ['Hello,', 'We received a request to sign in to %APP% using this email address. To sign in with your %EMAIL% account, follow this link.'],
    action: 'Sign in',
    ignore: "If you did not request this link, you can safely ignore this email.",
  },
  VERIFY_AND_CHANGE_EMAIL: {
    subject: 'Verify your new email for %APP%',
    body: ['Hello,', 'Follow this link to verify %EMAIL% and make it the sign-in email of your %APP% account.'],
    action: 'Verify and change email',
    ignore: "If you didn't ask to change your email, you can ignore this email.",
  },
  RECOVER_EMAIL: {
    subject: 'Your sign-in email for %APP% was changed',
    body: ['Hello,', 'Your sign-in email for %APP% was changed to %EMAIL%.', 'If you didn\u2019t ask to change your email, follow this link to reset your sign-in email.'],
    action: 'Restore my email',
    ignore: 'If you made this change, you can ignore this email.',
  },
};

const fr: Catalogue = {
  PASSWORD_RESET: {
    subject: 'Réinitialisez votre mot de passe pour %APP%',
    body: ['Bonjour,', 'Cliquez sur ce lien pour réinitialiser le mot de passe %APP% de votre compte %EMAIL%.'],
    action: 'Réinitialiser le mot de passe',
    ignore: "Si vous n'avez pas demandé à réinitialiser votre mot de passe, vous pouvez ignorer cet e-mail.",
  },
  VERIFY_EMAIL: {
    subject: 'Validez votre adresse e-mail pour %APP%',
    body: ['Bonjour,', 'Cliquez sur ce lien pour valider votre adresse e-mail.'],
    action: "Valider l'adresse",
    ignore: "Si vous n'avez pas demandé à valider cette adresse, vous pouvez ignorer cet e-mail.",
  },
  EMAIL_SIGNIN: {
    subject: 'Connexion à %APP%',
    body: ['Bonjour,', 'Nous avons reçu une demande de connexion à %APP% avec cette adresse. Pour vous connecter avec le compte %EMAIL%, cliquez sur ce lien.'],
    action: 'Se connecter',
    ignore: "Si vous n'avez pas demandé ce lien, vous pouvez ignorer cet e-mail.",
  },
  VERIFY_AND_CHANGE_EMAIL: {
    subject: 'Validez votre nouvelle adresse e-mail pour %APP%',
    body: ['Bonjour,', 'Cliquez sur ce lien pour valider %EMAIL% et en faire l’adresse de connexion de votre compte %APP%.'],
    action: "Valider et changer l'adresse",
    ignore: "Si vous n'avez pas demandé ce changement, vous pouvez ignorer cet e-mail.",
  },
  RECOVER_EMAIL: {
    subject: 'Votre adresse de connexion à %APP% a été modifiée',
    body: ['Bonjour,', 'Votre adresse de connexion à %APP% est devenue %EMAIL%.', "Si vous n'avez pas demandé ce changement, cliquez sur ce lien pour rétablir votre adresse."],
    action: 'Rétablir mon adresse',
    ignore: 'Si vous êtes à l’origine de ce changement, vous pouvez ignorer cet e-mail.',
  },
};

const de: Catalogue = {
  PASSWORD_RESET: {
    subject: 'Passwort für %APP% zurücksetzen',
    body: ['Hallo,', 'Über diesen Link können Sie das %APP%-Passwort für Ihr Konto %EMAIL% zurücksetzen.'],
    action: 'Passwort zurücksetzen',
    ignore: 'Wenn Sie das nicht angefordert haben, können Sie diese E-Mail ignorieren.',
  },
  VERIFY_EMAIL: {
    subject: 'E-Mail-Adresse für %APP% bestätigen',
    body: ['Hallo,', 'Bitte bestätigen Sie Ihre E-Mail-Adresse über diesen Link.'],
    action: 'E-Mail bestätigen',
    ignore: 'Wenn Sie das nicht angefordert haben, können Sie diese E-Mail ignorieren.',
  },
  EMAIL_SIGNIN: {
    subject: 'Bei %APP% anmelden',
    body: ['Hallo,', 'Über diesen Link melden Sie sich mit dem Konto %EMAIL% bei %APP% an.'],
    action: 'Anmelden',
    ignore: 'Wenn Sie diesen Link nicht angefordert haben, können Sie diese E-Mail ignorieren.',
  },
  VERIFY_AND_CHANGE_EMAIL: {
    subject: 'Neue E-Mail-Adresse für %APP% bestätigen',
    body: ['Hallo,', 'Über diesen Link bestätigen Sie %EMAIL% als neue Anmeldeadresse Ihres %APP%-Kontos.'],
    action: 'Bestätigen und ändern',
    ignore: 'Wenn Sie das nicht angefordert haben, können Sie diese E-Mail ignorieren.',
  },
  RECOVER_EMAIL: {
    subject: 'Ihre Anmeldeadresse für %APP% wurde geändert',
    body: ['Hallo,', 'Ihre Anmeldeadresse für %APP% wurde in %EMAIL% geändert.', 'Wenn Sie das nicht waren, stellen Sie Ihre Adresse über diesen Link wieder her.'],
    action: 'Adresse wiederherstellen',
    ignore: 'Wenn Sie die Änderung vorgenommen haben, können Sie diese E-Mail ignorieren.',
  },
};

const catalogues: Record<string, Catalogue> = { en, fr, de };

/** `fr-CA` -> `fr`; anything unknown -> `en`. */
export function pickLanguage(languageCode: string | undefined): string {
  const base = (languageCode ?? '').toLowerCase().split(/[-_]/)[0] ?? '';
  return catalogues[base] ? base : 'en';
}

export interface TemplateInput {
  requestType: OobRequestType;
  language: string;
  projectName: string;
  /** The address the message is about (for a change, the new one). */
  email: string;
  link: string;
}

export function renderMail(input: TemplateInput): MailContent {
  const wording = (catalogues[input.language] ?? en)[input.requestType];
  const fill = (text: string) => text.replaceAll('%APP%', input.projectName).replaceAll('%EMAIL%', input.email);
  const paragraphs = wording.body.map(fill);
  const text = [...paragraphs, '', input.link, '', fill(wording.ignore), '', `— ${input.projectName}`].join('\n');
  const html = [
    '<!doctype html><html><body style="font-family: sans-serif; line-height: 1.5">',
    ...paragraphs.map((p) => `<p>${escapeHtml(p)}</p>`),
    `<p><a href="${escapeHtml(input.link)}">${escapeHtml(wording.action)}</a></p>`,
    `<p style="font-size: small">${escapeHtml(input.link)}</p>`,
    `<p>${escapeHtml(fill(wording.ignore))}</p>`,
    `<p>— ${escapeHtml(input.projectName)}</p>`,
    '</body></html>',
  ].join('\n');
  return { subject: fill(wording.subject), text, html };
}

function escapeHtml(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;').replaceAll("'", '&#39;');
}
