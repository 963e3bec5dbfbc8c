/**
 * The path of a request URL, without its query: a slice rather than split's array of parts, since
 * the hooks that run on every request (CORS, metrics) each need it.
 */
export function pathOf(url: string): string {
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}
