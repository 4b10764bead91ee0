// What type_text needs to know of its target (this): the URL of the
// document it belongs to (a secret may be typed only on its domains),
// whether it is a text field (a secret goes into nothing else: an iframe
// element would pass the focus and the text on to another document), and
// whether it is a password field (the typed text is then kept out of the
// evidence; a secret goes only into one unless the manifest allows text
// fields), and how many characters it keeps.
function() {
  const t = this.tagName;
  const type = this instanceof HTMLInputElement
    ? Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'type').get.call(this) : '';
  const noText = ['button', 'submit', 'reset', 'checkbox', 'radio', 'file', 'image', 'hidden', 'color', 'range'];
  const field = (t === 'INPUT' && !noText.includes(type)) || t === 'TEXTAREA' || this.isContentEditable === true;
  // How many characters the field keeps (-1: no limit): a secret it cannot
  // hold whole is not typed, or the page would show a prefix of it.
  let maxLength = -1;
  if (t === 'INPUT') maxLength = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'maxLength').get.call(this);
  if (t === 'TEXTAREA') maxLength = Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, 'maxLength').get.call(this);
  return {url: this.ownerDocument.location.href, field: field, tag: t.toLowerCase(), password: type === 'password', maxLength: maxLength};
}
