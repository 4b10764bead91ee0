// The console's index follows the daemon's event stream: when an event
// says something changed, the page asks the daemon for itself again and
// takes in what changed, without a reload. Nothing moves under the
// pointer: a held call or a session keeps its place (new ones come last),
// and one that is no longer in the list stays where it was, marked, with
// its buttons gone, until the page is reloaded; only the answered calls,
// the last section, are replaced whole. The markup taken in is the
// daemon's own rendering of this page (its templates escape whatever
// agents and pages wrote); nothing here builds HTML from an event.
(() => {
  const live = document.getElementById('live');
  if (!live) return;
  const base = location.pathname.replace(/\/+$/, '');
  const url = (location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + base + '/events';
  const watched = new Set(['approval_asked', 'approval_answered', 'session_opened', 'session_ended', 'decision']);
  const say = (state, text) => { live.dataset.state = state; live.textContent = text; };

  // keep takes in a list whose entries keep their place (data-key, and
  // data-version, which changes when an entry does).
  const keep = (cur, next) => {
    const have = new Map();
    for (const el of cur.children) if (el.dataset.key) have.set(el.dataset.key, el);
    for (const el of [...next.children]) {
      const old = have.get(el.dataset.key);
      have.delete(el.dataset.key);
      if (!old) {
        cur.append(document.importNode(el, true));
      } else if (old.dataset.version !== el.dataset.version && !old.classList.contains('gone')) {
        old.replaceWith(document.importNode(el, true));
      }
    }
    for (const old of have.values()) {
      if (old.classList.contains('none')) { old.remove(); continue; }
      if (old.classList.contains('gone')) continue;
      old.classList.add('gone');
      for (const f of old.querySelectorAll('form')) f.remove();
      if (old.tagName === 'SECTION') {
        const note = document.createElement('p');
        note.className = 'gone-note';
        note.textContent = 'No longer waiting (answered, withdrawn or past its deadline): see Answered below.';
        old.append(note);
      }
    }
  };
  const replace = (cur, next) => cur.replaceChildren(...[...next.childNodes].map(n => document.importNode(n, true)));

  // refresh asks for the page once the daemon's view has taken event seen,
  // one request at a time (events that come meanwhile make one more).
  let seen = 0, busy = false, again = false;
  const refresh = async () => {
    if (busy) { again = true; return; }
    busy = true;
    try {
      do {
        again = false;
        const res = await fetch(base + '/?seen=' + seen, { credentials: 'same-origin', cache: 'no-store' });
        if (!res.ok || res.redirected) {
          say('ended', 'The sign-in has ended: reload the page to sign in again.');
          return;
        }
        const doc = new DOMParser().parseFromString(await res.text(), 'text/html');
        for (const cur of document.querySelectorAll('[data-live]')) {
          const next = doc.getElementById(cur.id);
          if (next) (cur.dataset.live === 'replace' ? replace : keep)(cur, next);
        }
      } while (again);
    } catch (e) {
      say('retrying', 'The page could not be brought up to date: reload it.');
    } finally {
      busy = false;
    }
  };

  const connect = () => {
    const ws = new WebSocket(url);
    ws.onopen = () => {
      say('live', 'Live: held calls and sessions show here as they change.');
      refresh(); // what happened between the page's rendering and now
    };
    ws.onmessage = m => {
      let e;
      try { e = JSON.parse(m.data); } catch (err) { return; }
      if (!watched.has(e.type)) return;
      seen = Math.max(seen, e.seq || 0);
      refresh();
    };
    ws.onclose = e => {
      if (e.code === 1008) {
        say('ended', 'The sign-in has ended: reload the page to sign in again.');
        return;
      }
      say('retrying', 'Not connected to the daemon\'s events: retrying; what this page shows may be out of date.');
      setTimeout(connect, 3000);
    };
  };
  connect();
})();
