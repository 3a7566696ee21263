/* Material's search index on demand. Material's bundle requests search/search_index.json (every page's text: 2.5 MB
   at 2,218 recipes) at the start of every page load and builds a lunr index of it in a worker: ~0.9 s of CPU per page
   view in Chromium, whether or not the reader searches. This holds that one request until the reader reaches for
   search: a focus inside the search form (a click in the box, Material's "/", "s" and "f" keys, a shared ?q= link),
   the search toggle (the header's magnifier on a phone); a ?h= link (a search result's highlights) needs the index at
   once. Material runs the query typed meanwhile once its worker is ready.
   Material 9 requests the index with XMLHttpRequest from its bundle, which runs after <head>: XMLHttpRequest's open
   and send are wrapped until that one request (or DOMContentLoaded), then restored. Inlined in <head> by main.html. */
(function () {
  if (new URLSearchParams(location.search).has("h")) return;
  var proto = XMLHttpRequest.prototype;
  var open = proto.open;
  var send = proto.send;
  var wanted = false;
  var held = null;

  function restore() {
    proto.open = open;
    proto.send = send;
  }

  function want() {
    if (wanted) return;
    wanted = true;
    if (held) held();
  }

  proto.open = function (method, url) {
    this.orSearchIndex = /\/search\/search_index\.json$/.test(new URL(String(url), location.href).pathname);
    return open.apply(this, arguments);
  };
  proto.send = function () {
    if (!this.orSearchIndex) return send.apply(this, arguments);
    restore();
    var request = this;
    var body = arguments;
    held = function () { send.apply(request, body); };
    if (wanted) held();
  };
  document.addEventListener("DOMContentLoaded", restore);
  document.addEventListener("focusin", function (event) {
    if (event.target instanceof Element && event.target.closest("form[name=search]")) want();
  });
  document.addEventListener("change", function (event) {
    if (event.target instanceof Element && event.target.id === "__search") want();
  });
})();
