// What type_text needs to know of its target (this): the URL of the
// document it belongs to (a secret may be typed only on its domains),
// whether it is a text field (a secret goes into nothing else: an iframe
// element would pass the focus and the text on to another document), and
// whether it is a password field (the typed text is then kept out of the
// evidence).
function() {
  const t = this.tagName;
  const type = this instanceof HTMLInputElement
    ? Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'type').get.call(this) : '';
  const noText = ['button', 'submit', 'reset', 'checkbox', 'radio', 'file', 'image', 'hidden', 'color', 'range'];
  const field = (t === 'INPUT' && !noText.includes(type)) || t === 'TEXTAREA' || this.isContentEditable === true;
  return {url: this.ownerDocument.location.href, field: field, tag: t.toLowerCase(), password: type === 'password'};
}
