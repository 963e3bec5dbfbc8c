/*
 * Hearth's stand-in for gapi.iframes, the one piece of Google's script the Firebase Auth SDK needs
 * for popup and redirect sign-in. Load it before Auth: `<script src="/__/auth/gapi.js"></script>`.
 * It talks to Hearth's hosted iframe with plain postMessage, so nothing is fetched from outside.
 */
(function () {
  'use strict';
  if (window.gapi && window.gapi.iframes && window.gapi.iframes.Iframe) return;

  function HearthIframe(element, origin) {
    var self = this;
    this.element = element;
    this.origin = origin;
    this.nextId = 1;
    this.pending = {};
    this.handlers = {};
    this.ready = new Promise(function (resolve) {
      self.markReady = resolve;
    });
    window.addEventListener('message', function (event) {
      self.onMessage(event);
    });
  }

  HearthIframe.prototype.onMessage = function (event) {
    if (event.source !== this.element.contentWindow || event.origin !== this.origin) return;
    var message = event.data;
    if (!message || message.__hearthGapi !== 1) return;
    if (message.kind === 'ready') {
      this.markReady();
    } else if (message.kind === 'reply') {
      var callback = this.pending[message.id];
      delete this.pending[message.id];
      if (callback) callback(message.result);
    } else if (message.kind === 'event') {
      var handler = this.handlers[message.name];
      var result = { status: 'ERROR' };
      try {
        if (handler) result = handler(message.payload);
      } catch (error) {
        result = { status: 'ERROR' };
      }
      this.post({ kind: 'eventReply', id: message.id, result: result });
    }
  };

  HearthIframe.prototype.post = function (message) {
    message.__hearthGapi = 1;
    this.element.contentWindow.postMessage(message, this.origin);
  };

  HearthIframe.prototype.call = function (name, payload) {
    var self = this;
    return this.ready.then(function () {
      return new Promise(function (resolve) {
        var id = self.nextId++;
        self.pending[id] = resolve;
        self.post({ kind: 'call', id: id, name: name, payload: payload || {} });
      });
    });
  };

  HearthIframe.prototype.restyle = function () {
    return Promise.resolve();
  };

  HearthIframe.prototype.ping = function (callback) {
    return this.call('ping').then(function (result) {
      if (callback) callback(result);
      return result;
    });
  };

  HearthIframe.prototype.register = function (name, handler) {
    this.handlers[name] = handler;
    this.call('register', { name: name });
  };

  HearthIframe.prototype.unregister = function (name) {
    delete this.handlers[name];
  };

  HearthIframe.prototype.send = function (name, payload, callback) {
    return this.call(name, payload).then(function (result) {
      try {
        if (callback) callback(result);
      } catch (error) {
        // The SDK's own callback may throw after reading the answer; that is its business.
      }
      return result;
    });
  };

  var context = {
    open: function (options, callback) {
      var element = document.createElement('iframe');
      var attributes = options.attributes || {};
      Object.keys(attributes).forEach(function (name) {
        if (name === 'style') Object.assign(element.style, attributes.style);
        else element.setAttribute(name, attributes[name]);
      });
      element.src = options.url;
      (options.where || document.body).appendChild(element);
      var iframe = new HearthIframe(element, new URL(options.url, location.href).origin);
      return Promise.resolve(callback ? callback(iframe) : iframe);
    },
  };

  window.gapi = window.gapi || {};
  window.gapi.iframes = {
    Iframe: HearthIframe,
    CROSS_ORIGIN_IFRAMES_FILTER: function () {
      return true;
    },
    getContext: function () {
      return context;
    },
  };
})();
