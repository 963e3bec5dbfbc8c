import type { BrowserContext, CDPSession, Page } from 'playwright-core';

/** A credential as the DevTools protocol hands it out and takes it back. */
export interface VirtualCredential {
  credentialId: string;
  isResidentCredential: boolean;
  rpId?: string;
  privateKey: string;
  userHandle?: string;
  signCount: number;
}

/**
 * Chromium's WebAuthn virtual authenticator (DevTools protocol `WebAuthn` domain): a platform
 * passkey provider with resident keys and user verification, so navigator.credentials.create and
 * .get run the real browser code, signing with keys the test never sees.
 */
export class VirtualAuthenticator {
  private constructor(
    readonly cdp: CDPSession,
    readonly authenticatorId: string,
  ) {}

  static async attach(context: BrowserContext, page: Page): Promise<VirtualAuthenticator> {
    const cdp = await context.newCDPSession(page);
    await cdp.send('WebAuthn.enable', { enableUI: false });
    const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
    });
    return new VirtualAuthenticator(cdp, authenticatorId);
  }

  /** Forgets every credential it holds, so a discoverable sign-in finds exactly the next one made. */
  async clear(): Promise<void> {
    await this.cdp.send('WebAuthn.clearCredentials', { authenticatorId: this.authenticatorId });
  }

  /**
   * Off: requests wait for a touch that never comes (a conditional one stays in the autofill);
   * one made while it is off is not answered when it is turned on again (only later ones are).
   */
  async setPresence(enabled: boolean): Promise<void> {
    await this.cdp.send('WebAuthn.setAutomaticPresenceSimulation', { authenticatorId: this.authenticatorId, enabled });
  }

  /** Takes a credential out (answered, private key included, to put back with `restore`). */
  async remove(credentialId: string): Promise<VirtualCredential> {
    const { credential } = (await this.cdp.send('WebAuthn.getCredential', { authenticatorId: this.authenticatorId, credentialId })) as { credential: VirtualCredential };
    await this.cdp.send('WebAuthn.removeCredential', { authenticatorId: this.authenticatorId, credentialId });
    return credential;
  }

  async restore(credential: VirtualCredential): Promise<void> {
    await this.cdp.send('WebAuthn.addCredential', { authenticatorId: this.authenticatorId, credential });
  }

  async credentials(): Promise<{ credentialId: string; signCount: number; isResidentCredential: boolean; userHandle?: string }[]> {
    const { credentials } = await this.cdp.send('WebAuthn.getCredentials', { authenticatorId: this.authenticatorId });
    return credentials;
  }
}

/** navigator.credentials.create with Hearth's credentialCreationOptions; the credential's toJSON(). */
export function createCredential(page: Page, options: unknown): Promise<any> {
  return page.evaluate(async (json: any) => {
    const publicKey = PublicKeyCredential.parseCreationOptionsFromJSON(json);
    const credential = (await navigator.credentials.create({ publicKey })) as PublicKeyCredential;
    return credential.toJSON();
  }, options);
}

/** navigator.credentials.get with Hearth's credentialRequestOptions (no credentials named: discoverable). */
export function getAssertion(page: Page, options: unknown): Promise<any> {
  return page.evaluate(async (json: any) => {
    const publicKey = PublicKeyCredential.parseRequestOptionsFromJSON(json);
    const credential = (await navigator.credentials.get({ publicKey })) as PublicKeyCredential;
    return credential.toJSON();
  }, options);
}

/** The same response in the shape Google's discovery document names (standard base64). */
export function discoveryShape(response: any, kind: 'registration' | 'authentication'): Record<string, unknown> {
  const b64 = (text: string) => Buffer.from(text, 'base64url').toString('base64');
  const r = response.response;
  if (kind === 'registration') {
    return {
      credentialId: response.id,
      credentialType: 'PUBLIC_KEY',
      authenticatorAttestationResponse: { clientDataJson: b64(r.clientDataJSON), attestationObject: b64(r.attestationObject), transports: r.transports },
    };
  }
  return {
    credentialId: response.id,
    credentialType: 'PUBLIC_KEY',
    authenticatorAssertionResponse: { clientDataJson: b64(r.clientDataJSON), authenticatorData: b64(r.authenticatorData), signature: b64(r.signature), userHandle: b64(r.userHandle) },
  };
}
