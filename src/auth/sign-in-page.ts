// The pages of cutroom's own sign-in, as HTML strings: one page to sign in and consent (which app asks, for which
// scopes, each said in words), and one for what went wrong. Everything shown from a request or a registration (the
// app's name, its address) is escaped; the pages load nothing, run no script and may not be framed (the headers are
// set where they are sent).

/** What each scope lets an app do, in words; an unknown scope is shown by its name. */
const SCOPE_WORDS: Record<string, string> = {
  cutroom: "use cutroom's tools and resources as you: your projects, their media, edits, previews and renders",
  offline_access: 'stay signed in: renew its access without asking you again (until you sign out or it is revoked)',
  openid: 'know who you are (your account id here)',
};

export const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#f4f4f5;color:#18181b}
main{max-width:28rem;margin:3rem auto;background:#fff;padding:2rem;border-radius:12px;box-shadow:0 1px 4px #0002}
h1{font-size:1.4rem;margin:0 0 1rem}label{display:block;margin:.8rem 0 .2rem;font-weight:600}
input{width:100%;box-sizing:border-box;padding:.5rem;font:inherit;border:1px solid #a1a1aa;border-radius:6px}
.actions{display:flex;gap:.6rem;margin-top:1.4rem}button{font:inherit;padding:.5rem 1.2rem;border-radius:6px;border:1px solid #3f3f46;cursor:pointer}
button.allow{background:#18181b;color:#fff}.error{color:#b91c1c;font-weight:600}small{color:#52525b}li{margin:.3rem 0}
@media (prefers-color-scheme:dark){body{background:#18181b;color:#f4f4f5}main{background:#27272a}input{background:#18181b;color:#f4f4f5}
button{background:#3f3f46;color:#f4f4f5}button.allow{background:#f4f4f5;color:#18181b}small{color:#a1a1aa}}`;

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body><main>${body}</main></body></html>`;
}

export interface SignInView {
  /** The form's action: this interaction's own URL. */
  action: string;
  /** The app asking, by its registered name (or its id). */
  client: string;
  /** Where it will send you back (its redirect's host). */
  returnsTo?: string;
  scopes: string[];
  /** Signed in already (a session): only consent is asked. */
  signedInAs?: string;
  /** A name and password may be given (the operator lists people). */
  passwords: boolean;
  /** A key may be given instead: the caller's service key, or the operator's token on the local backend. */
  keyLabel?: string;
  /** After the password, a service key is asked for (once) unless the team's is used. */
  serviceKey?: 'required' | 'optional';
  name?: string;
  error?: string;
}

export function signInPage(v: SignInView): string {
  const scopes = v.scopes
    .map(
      (s) =>
        `<li><strong>${escapeHtml(s)}</strong>: ${escapeHtml(SCOPE_WORDS[s] ?? 'a permission cutroom does not know')}</li>`,
    )
    .join('');
  const fields: string[] = [];
  if (!v.signedInAs && v.passwords)
    fields.push(
      `<label for="name">Name</label><input id="name" name="name" autocomplete="username" value="${escapeHtml(v.name ?? '')}">`,
      `<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password">`,
    );
  if (!v.signedInAs && v.passwords && v.serviceKey)
    fields.push(
      `<label for="service_key">Your Video Jungle API key</label><input id="service_key" name="service_key" type="password" autocomplete="off">`,
      `<small>Asked once, then kept encrypted for your account${v.serviceKey === 'optional' ? "; leave it empty to use the team's key" : ''}.</small>`,
    );
  if (!v.signedInAs && v.keyLabel)
    fields.push(
      `<label for="key">${v.passwords ? 'Or sign in with ' : ''}${escapeHtml(v.keyLabel)}</label><input id="key" name="key" type="password" autocomplete="off">`,
    );
  return page(
    'Sign in to cutroom',
    `<h1>Sign in to cutroom</h1>
<p><strong>${escapeHtml(v.client)}</strong> asks to use cutroom for you${v.returnsTo ? ` (it returns to ${escapeHtml(v.returnsTo)})` : ''}. It will be able to:</p>
<ul>${scopes}</ul>
${v.signedInAs ? `<p>You are signed in as <strong>${escapeHtml(v.signedInAs)}</strong>.</p>` : ''}
${v.error ? `<p class="error" role="alert">${escapeHtml(v.error)}</p>` : ''}
<form method="post" action="${escapeHtml(v.action)}">${fields.join('')}
<div class="actions"><button class="allow" type="submit" name="action" value="allow">Allow</button><button type="submit" name="action" value="deny" formnovalidate>Deny</button></div>
</form>`,
  );
}

export function problemPage(title: string, message: string): string {
  return page(title, `<h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p>`);
}

/** The headers every page goes out with: not cached, not framed, nothing loaded, no script. */
export const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'x-frame-options': 'DENY',
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'",
  // same-origin, not no-referrer: with no-referrer a browser posts the form with `Origin: null`, which is refused.
  'referrer-policy': 'same-origin',
};
