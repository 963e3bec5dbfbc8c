import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { webcrypto } from 'node:crypto';
import * as samlify from 'samlify';

x509.cryptoProvider.set(webcrypto as unknown as Crypto);
// samlify asks for an XML schema validator; this test IdP only reads requests Hearth generated.
samlify.setSchemaValidator({ validate: async () => 'skipped' });

const algorithm = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256', publicExponent: new Uint8Array([1, 0, 1]), modulusLength: 2048 };

function pem(label: string, der: ArrayBuffer): string {
  const body = Buffer.from(der).toString('base64').match(/.{1,64}/g)!.join('\n');
  return `-----BEGIN ${label}-----\n${body}\n-----END ${label}-----\n`;
}

export interface SigningIdentity {
  privateKeyPem: string;
  certificatePem: string;
  /** The certificate as firebase-admin sends it: base64 DER without armour. */
  certificateBase64: string;
}

export async function newSigningIdentity(name: string): Promise<SigningIdentity> {
  const keys = (await webcrypto.subtle.generateKey(algorithm, true, ['sign', 'verify'])) as CryptoKeyPair;
  const certificate = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: '01',
    name: `CN=${name}`,
    notBefore: new Date(Date.now() - 60_000),
    notAfter: new Date(Date.now() + 24 * 3600_000),
    signingAlgorithm: algorithm,
    keys,
  });
  return {
    privateKeyPem: pem('PRIVATE KEY', await webcrypto.subtle.exportKey('pkcs8', keys.privateKey)),
    certificatePem: certificate.toString('pem'),
    certificateBase64: Buffer.from(certificate.rawData).toString('base64'),
  };
}

/**
 * A SAML identity provider played by samlify: it reads Hearth's AuthnRequest (HTTP-Redirect) and
 * answers with a signed response for a user, to be POSTed to Hearth's handler.
 */
export class TestSamlIdp {
  readonly entityId = 'https://idp.saml.test/metadata';
  readonly ssoUrl = 'https://idp.saml.test/sso';

  constructor(private readonly signing: SigningIdentity) {}

  async answer(authnRequestUrl: string, spEntityId: string, acsUrl: string, email: string): Promise<{ SAMLResponse: string; RelayState: string }> {
    const idp = samlify.IdentityProvider({
      entityID: this.entityId,
      privateKey: this.signing.privateKeyPem,
      signingCert: this.signing.certificatePem,
      singleSignOnService: [{ Binding: 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect', Location: this.ssoUrl }],
      nameIDFormat: ['urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress'],
      isAssertionEncrypted: false,
      wantAuthnRequestsSigned: false,
    });
    const sp = samlify.ServiceProvider({
      entityID: spEntityId,
      assertionConsumerService: [{ Binding: 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST', Location: acsUrl }],
      wantAssertionsSigned: true,
      authnRequestsSigned: false,
    });
    const url = new URL(authnRequestUrl);
    const query = Object.fromEntries(url.searchParams);
    const parsed = await idp.parseLoginRequest(sp, 'redirect', { query, octetString: url.search.slice(1) });
    const response = (await idp.createLoginResponse(sp, { extract: parsed.extract }, 'post', { email }, { relayState: query.RelayState })) as { context: string };
    return { SAMLResponse: response.context, RelayState: query.RelayState ?? '' };
  }
}
