import { request } from 'node:http';

/**
 * POSTs JSON from a given loopback source address (127.0.0.2, ...: all of 127/8 is this machine),
 * so a test can play callers at different addresses; answers status and parsed body.
 */
export function postJsonFrom(localAddress: string, url: string, body: unknown): Promise<{ status: number; body: any }> {
  const text = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', localAddress, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) } }, (res) => {
      let answer = '';
      res.on('data', (chunk: Buffer) => (answer += chunk.toString()));
      res.on('end', () => {
        let parsed: unknown = answer;
        try {
          parsed = JSON.parse(answer);
        } catch {
          // leave as text; the caller's assertion will show it
        }
        resolve({ status: res.statusCode ?? 0, body: parsed });
      });
    });
    req.on('error', reject);
    req.end(text);
  });
}
