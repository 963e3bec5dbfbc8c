/*
 * Hearth's stand-in for Google's reCAPTCHA v2 script, for the Firebase Auth SDK's RecaptchaVerifier
 * (phone sign-in, SMS second factors). Include it before creating a RecaptchaVerifier:
 *
 *   <script src="https://YOUR-HEARTH/__/auth/recaptcha.js"></script>
 *
 * The SDK uses a `window.grecaptcha` that has `render` instead of fetching www.google.com/recaptcha.
 * This one offers the same calls (render, execute, reset, getResponse, ready) and, instead of
 * Google's risk analysis, a proof of work (ALTCHA, PBKDF2/SHA-256 through Web Crypto) fetched from
 * and answered to the Hearth that served this file; the answer buys a single-use token, which the
 * SDK sends as `recaptchaToken`. Invisible widgets work on `execute`; others show a checkbox that
 * works when ticked. Web Crypto needs a secure context (https, or localhost).
 */
(function () {
  'use strict';
  if (window.grecaptcha && window.grecaptcha.__hearth) return;

  var script = document.currentScript;
  var scriptUrl = new URL(script && script.src ? script.src : '/__/auth/recaptcha.js', window.location.href);
  var widgets = [];

  function endpoint(name) {
    return new URL('recaptcha/' + name, scriptUrl).toString();
  }

  /** JSON to Hearth, without cookies: the challenge and its answer are all the server needs. */
  function post(name, body) {
    return fetch(endpoint(name), {
      method: 'POST',
      mode: 'cors',
      credentials: 'omit',
      cache: 'no-store',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }).then(function (response) {
      return response.json().then(function (json) {
        if (!response.ok) throw new Error((json && json.error && json.error.message) || 'HTTP ' + response.status);
        return json;
      });
    });
  }

  function hexToBytes(hex) {
    var bytes = new Uint8Array(hex.length / 2);
    for (var i = 0; i < bytes.length; i++) bytes[i] = parseInt(hex.substr(i * 2, 2), 16);
    return bytes;
  }

  function bytesToHex(bytes) {
    var hex = '';
    for (var i = 0; i < bytes.length; i++) hex += (bytes[i] < 16 ? '0' : '') + bytes[i].toString(16);
    return hex;
  }

  function startsWith(bytes, prefix) {
    for (var i = 0; i < prefix.length; i++) if (bytes[i] !== prefix[i]) return false;
    return true;
  }

  /** ALTCHA's key for one counter: PBKDF2(password = nonce || uint32be(counter), salt). */
  function deriveKey(parameters, salt, nonce, counter) {
    var password = new Uint8Array(nonce.length + 4);
    password.set(nonce, 0);
    new DataView(password.buffer).setUint32(nonce.length, counter, false);
    return crypto.subtle
      .importKey('raw', password, 'PBKDF2', false, ['deriveBits'])
      .then(function (key) {
        return crypto.subtle.deriveBits({ name: 'PBKDF2', salt: salt, iterations: parameters.cost, hash: 'SHA-256' }, key, parameters.keyLength * 8);
      })
      .then(function (bits) {
        return new Uint8Array(bits);
      });
  }

  /**
   * Tries counters from 0 up until the derived key starts with the challenge's prefix. A few run
   * at once: browsers compute Web Crypto off the page's thread, so the page stays responsive and
   * several cores help. Resolves null when `stillWanted` says the widget was reset meanwhile.
   */
  function solve(challenge, stillWanted) {
    var parameters = challenge.parameters;
    if (parameters.algorithm !== 'PBKDF2/SHA-256') return Promise.reject(new Error('Unsupported challenge algorithm.'));
    if (!window.crypto || !crypto.subtle) return Promise.reject(new Error('This page is not a secure context (https), which the check needs.'));
    var salt = hexToBytes(parameters.salt);
    var nonce = hexToBytes(parameters.nonce);
    var prefix = hexToBytes(parameters.keyPrefix);
    var parallel = Math.min(8, Math.max(2, navigator.hardwareConcurrency || 2));
    function batch(start) {
      if (!stillWanted()) return Promise.resolve(null);
      if (start > 0xffffffff) return Promise.reject(new Error('The challenge has no answer.'));
      var attempts = [];
      for (var i = 0; i < parallel; i++) attempts.push(deriveKey(parameters, salt, nonce, start + i));
      return Promise.all(attempts).then(function (keys) {
        for (var j = 0; j < keys.length; j++) {
          if (startsWith(keys[j], prefix)) return { counter: start + j, derivedKey: bytesToHex(keys[j]) };
        }
        return batch(start + parallel);
      });
    }
    return batch(0);
  }

  /** A callback parameter: a function, or the name of a global one (as Google's script accepts). */
  function call(callback, argument) {
    var fn = typeof callback === 'string' ? window[callback] : callback;
    if (typeof fn === 'function') fn(argument);
  }

  function widgetOf(id) {
    var widget = widgets[id === undefined || id === null ? 0 : id];
    if (!widget) throw new Error('Invalid reCAPTCHA client id: ' + id);
    return widget;
  }

  function Widget(id, container, params) {
    this.id = id;
    this.params = params;
    this.response = '';
    this.generation = 0;
    this.busy = false;
    this.expiry = undefined;
    this.invisible = params.size === 'invisible';
    if (!this.invisible) this.drawCheckbox(container);
  }

  Widget.prototype.drawCheckbox = function (container) {
    var dark = this.params.theme === 'dark';
    var box = document.createElement('div');
    box.className = 'hearth-recaptcha';
    // Styles through the DOM, not markup: a page's CSP that forbids inline style attributes allows these.
    var style = box.style;
    style.display = 'inline-flex';
    style.alignItems = 'center';
    style.gap = '0.6em';
    style.padding = this.params.size === 'compact' ? '0.4em 0.6em' : '0.8em 1em';
    style.border = '1px solid ' + (dark ? '#555' : '#d3d3d3');
    style.borderRadius = '4px';
    style.background = dark ? '#222' : '#f9f9f9';
    style.color = dark ? '#eee' : '#222';
    style.font = '14px system-ui, sans-serif';
    var input = document.createElement('input');
    input.type = 'checkbox';
    input.id = 'hearth-recaptcha-' + this.id + '-' + Math.random().toString(36).slice(2);
    input.style.width = input.style.height = '1.4em';
    input.style.margin = '0';
    if (typeof this.params.tabindex === 'number') input.tabIndex = this.params.tabindex;
    var label = document.createElement('label');
    label.htmlFor = input.id;
    label.textContent = "I'm not a robot";
    var status = document.createElement('span');
    status.setAttribute('role', 'status');
    status.setAttribute('aria-live', 'polite');
    status.style.fontSize = '0.85em';
    status.style.opacity = '0.8';
    box.appendChild(input);
    box.appendChild(label);
    box.appendChild(status);
    container.appendChild(box);
    this.box = box;
    this.input = input;
    this.status = status;
    var self = this;
    input.addEventListener('change', function () {
      if (input.checked && !self.response) self.check();
    });
  };

  Widget.prototype.show = function (state, text) {
    if (!this.input) return;
    this.box.setAttribute('data-state', state);
    this.box.setAttribute('aria-busy', state === 'checking' ? 'true' : 'false');
    this.status.textContent = text;
    this.input.checked = state === 'checking' || state === 'verified';
    // Ticked for good once verified; reset() or expiry offers it again.
    this.input.disabled = state === 'checking' || state === 'verified';
  };

  /** Fetches a challenge, solves it, redeems it; hands the token to `callback`. */
  Widget.prototype.check = function () {
    if (this.busy) return;
    var self = this;
    var generation = this.generation;
    var current = function () {
      return self.generation === generation;
    };
    this.busy = true;
    this.show('checking', 'Checking…');
    post('challenge', { siteKey: this.params.sitekey })
      .then(function (answer) {
        return solve(answer.challenge, current).then(function (solution) {
          if (!solution) return null;
          return post('redeem', { challenge: answer.challenge, solution: solution });
        });
      })
      .then(
        function (redeemed) {
          if (!current()) return;
          self.busy = false;
          if (!redeemed) return;
          self.response = redeemed.token;
          self.show('verified', 'Verified');
          // Expired a little early (a tenth, at most 5 s), so a token handed on is still good on arrival.
          var lifetimeMs = redeemed.expiresIn * 1000;
          self.expiry = setTimeout(function () {
            self.expire();
          }, lifetimeMs - Math.min(5000, lifetimeMs / 10));
          call(self.params.callback, redeemed.token);
        },
        function (error) {
          if (!current()) return;
          self.busy = false;
          self.show('error', /TOO_MANY_ATTEMPTS/.test(String(error && error.message)) ? 'Too many attempts. Try again later.' : 'Verification failed. Try again.');
          call(self.params['error-callback']);
        },
      );
  };

  Widget.prototype.expire = function () {
    this.response = '';
    this.expiry = undefined;
    this.show('expired', 'Verification expired. Check the box again.');
    call(this.params['expired-callback']);
  };

  Widget.prototype.reset = function () {
    this.generation += 1;
    this.busy = false;
    this.response = '';
    clearTimeout(this.expiry);
    this.expiry = undefined;
    this.show('ready', '');
  };

  window.grecaptcha = {
    __hearth: true,
    /** Draws a widget in `container` (an element or its id); answers its id, as Google's does. */
    render: function (container, params) {
      var element = typeof container === 'string' ? document.getElementById(container) : container;
      if (!element || element.nodeType !== 1) throw new Error('reCAPTCHA placeholder element must be an element or id');
      if (!params || !params.sitekey) throw new Error('Missing required parameters: sitekey');
      var id = widgets.length;
      widgets.push(new Widget(id, element, params));
      return id;
    },
    /** Invisible widgets: run the check now. A visible one waits for its checkbox. */
    execute: function (id) {
      var widget = widgetOf(id);
      if (widget.response) {
        var token = widget.response;
        setTimeout(function () {
          call(widget.params.callback, token);
        }, 0);
      } else if (widget.invisible) {
        widget.check();
      }
    },
    reset: function (id) {
      widgetOf(id).reset();
    },
    getResponse: function (id) {
      return widgetOf(id).response;
    },
    ready: function (callback) {
      setTimeout(callback, 0);
    },
  };

  // Google's `?onload=name` convention, for pages (or loaders) that wait for it.
  var onload = scriptUrl.searchParams.get('onload');
  if (onload && typeof window[onload] === 'function') {
    setTimeout(function () {
      window[onload]();
    }, 0);
  }
})();
