// Where pressing key (a key name without modifiers: "Enter", " ", ...) in
// the element (this) may send the tab, as resolve.js works it out, for the
// gate to judge. Enter in a text field, a checkbox, a radio button or a
// range is implicit submission (mode "enter"); Enter or Space on anything else that is not text-editing
// activates it as a click would (mode "click": links, buttons, and for
// the union, whatever a click on it could reach). Other keys lead nowhere
// by themselves; what the page's own key handlers do is held by the acting
// guard.
function(key) {
  const getter = (proto, prop) => Object.getOwnPropertyDescriptor(proto, prop).get;
  const tag = getter(Element.prototype, 'localName').call(this);
  const type = tag === 'input' ? getter(HTMLInputElement.prototype, 'type').call(this) : '';
  const buttonLike = ['button', 'submit', 'reset', 'image', 'checkbox', 'radio', 'file', 'color', 'range'];
  const textual = (tag === 'input' && !buttonLike.includes(type)) || tag === 'textarea' ||
    (this instanceof HTMLElement && getter(HTMLElement.prototype, 'isContentEditable').call(this));
  const embedded = ['iframe', 'frame', 'object', 'embed', 'portal', 'fencedframe'].includes(tag);
  // Chromium submits a form on Enter in a checkbox, a radio button or a
  // range too, but only by the form's default button (resolve.js).
  const submitsOnEnter = textual || ['checkbox', 'radio', 'range'].includes(type);
  let mode = '';
  if (key === 'Enter') mode = (tag === 'input' && submitsOnEnter) || tag === 'select' ? 'enter' : textual ? '' : 'click';
  else if (key === ' ') mode = textual ? '' : 'click';
  if (!mode) return {url: '', urls: [], submits: false, inForm: false, embeds: embedded};
  const r = RESOLVE(this, mode);
  return {url: r.url, urls: r.urls, submits: r.submits, inForm: r.inForm, embeds: r.embeds || embedded, downloads: r.downloads};
}
