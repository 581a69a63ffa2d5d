/**
 * The one HTTP primitive of the federation layer: `fetch` that never leaves the registry. Every
 * request of the bounded client (src/federation/client.ts), of the federation engines (the Comunica
 * thread imports this module; it has no other imports so that a worker thread can load it) and of
 * the endpoint probe goes through `fetchWithin`:
 *
 * - the first URL must pass the caller's check (`allowed`), else nothing is sent;
 * - redirects are never followed by `fetch` itself (`redirect: 'manual'`): a query (POST) is never
 *   re-sent to a redirect target; a document (GET/HEAD) follows a redirect only when the target
 *   passes the same check, hop by hop (at most `maxHops`);
 * - every request actually sent is counted per endpoint (the URL without query string and fragment).
 *
 * A redirect that is not followed is an error (`RedirectRefused`) naming both URLs, never a
 * silently empty answer.
 */

/** The endpoint a request goes to: its URL without query string and fragment (how requests are counted). */
export const endpointOf = (url: string): string => url.replace(/[?#].*$/, '');

/** Compares endpoint URLs as the registry does: exactly, except for trailing slashes. */
export const sameEndpoint = (a: string, b: string): boolean => a.replace(/\/+$/, '') === b.replace(/\/+$/, '');

/** A request refused before it was sent: its URL is outside the registry. */
export class RequestRefused extends Error {
  constructor(readonly url: string) {
    super(`refused to contact ${url}: not a registered endpoint`);
    this.name = 'RequestRefused';
  }
}

/** A URL for a message: its query string (a whole SPARQL query, percent-encoded) shown as `?…`. */
const shown = (url: string): string => (/[?#]/.test(url) ? `${endpointOf(url)}?…` : url);

/** A redirect answered by an endpoint and not followed (see the module comment). */
export class RedirectRefused extends Error {
  constructor(
    /** The URL that answered with the redirect. */
    readonly from: string,
    /** The redirect target (`Location`, resolved), or '' when the answer had none. */
    readonly to: string,
    /** The HTTP status (301, 302, 303, 307, 308). */
    readonly status: number,
    /** Whether the target passes the registry's check. */
    readonly targetAllowed: boolean,
  ) {
    super(
      `${shown(from)} answered HTTP ${status} with a redirect to ${to ? shown(to) : '(no Location)'}: not followed, ` +
        (targetAllowed ? 'a query goes only to the endpoint named in its SERVICE clause' : `${to ? shown(to) : 'the target'} is not a registered endpoint`) +
        '; nothing was sent there',
    );
    this.name = 'RedirectRefused';
  }
}

/** How `fetchWithin` bounds one request. */
export interface FetchBounds {
  /** Whether a URL (the first one and every redirect target) may be contacted. */
  allowed(url: string): boolean;
  /** Called once per request sent, with its endpoint (`endpointOf`). */
  count?(endpoint: string): void;
  /** Follow redirects whose target is allowed (GET and HEAD only; default false: every redirect is refused). */
  followRedirects?: boolean;
  /** Most redirects followed (default 5). */
  maxHops?: number;
}

const REDIRECT = new Set([301, 302, 303, 307, 308]);

/**
 * `fetch` within the registry (module comment).
 * @param input a URL, or a `Request` (as federation engines pass it)
 * @returns the response of the last request sent (never a 3xx)
 * @throws RequestRefused before sending to a URL that is not allowed; RedirectRefused for a redirect
 *   not followed; whatever `fetch` throws (network errors, aborts)
 */
export async function fetchWithin(input: string | URL | Request, init: RequestInit | undefined, bounds: FetchBounds): Promise<Response> {
  let url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
  const method = (init?.method ?? (typeof input === 'object' && 'method' in input ? input.method : 'GET')).toUpperCase();
  const maxHops = bounds.maxHops ?? 5;
  let next: string | URL | Request = input;
  for (let hop = 0; ; hop++) {
    if (!bounds.allowed(url)) throw new RequestRefused(endpointOf(url));
    bounds.count?.(endpointOf(url));
    const res = await fetch(next, { ...init, redirect: 'manual' });
    if (!REDIRECT.has(res.status)) return res;
    const location = res.headers.get('location');
    let to = '';
    try {
      to = location ? new URL(location, url).href : '';
    } catch {
      to = location ?? '';
    }
    await res.body?.cancel().catch(() => {});
    const ok = to !== '' && bounds.allowed(to);
    if (!bounds.followRedirects || (method !== 'GET' && method !== 'HEAD') || !ok || hop >= maxHops) throw new RedirectRefused(url, to, res.status, ok);
    url = to;
    next = to;
  }
}
