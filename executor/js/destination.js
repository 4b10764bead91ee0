// Where acting on the element (this) may send the tab, as resolve.js
// works it out (mode "click" or "submit"), for the gate to judge.
function(mode) {
  const r = RESOLVE(this, mode);
  return {url: r.url, urls: r.urls, submits: r.submits, inForm: r.inForm, embeds: r.embeds, downloads: r.downloads};
}
