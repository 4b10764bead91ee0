// The page facts the gate reads, evaluated in browsergate's isolated world
// (a JavaScript context of our own on the page's DOM): the page's scripts
// cannot redefine the built-ins used here. url and title are read over CDP
// (Page.getNavigationHistory); this reports the rest in one round trip.
//
// is_authenticated, part 1 of the documented rule: the page shows a control
// whose text or label says log out / sign out / log off.
(() => {
  const d = document;
  const re = /\b(log\s?out|sign\s?out|log\s?off)\b/i;
  let logout = false;
  for (const e of d.querySelectorAll('a, button, [role=button], input[type=submit], input[type=button]')) {
    const t = (e.innerText || e.value || e.getAttribute('aria-label') || '').trim();
    if (re.test(t)) { logout = true; break; }
  }
  return {url: d.location.href, title: d.title, has_forms: d.forms.length > 0,
          logout: logout, ready: d.readyState === 'complete', forms: d.forms.length};
})()
