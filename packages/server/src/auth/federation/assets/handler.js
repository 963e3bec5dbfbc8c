/*
 * Hearth's hosted handler page, after the provider answered: hands the auth event to the app,
 * through the opener's Hearth iframe (popup) or this origin's session storage (redirect). The
 * Auth emulator's sign-in widget (--dev, idp-widget.js) delivers its event the same way, once the
 * developer has picked an account: `window.hearthDeliverAuthEvent`.
 */
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('hearth-data').textContent);
  var status = document.getElementById('status');
  function say(text) {
    status.textContent = text;
  }

  function deliver(where, event) {
    if (/Popup$/.test(where.authType)) {
      var delivered = false;
      try {
        var frames = window.opener ? window.opener.frames : [];
        for (var i = 0; i < frames.length; i++) {
          try {
            var frame = frames[i].location;
            if (frame.origin !== location.origin || !/\/auth\/iframe$/.test(frame.pathname)) continue;
            var params = new URLSearchParams(frame.search);
            if (params.get('apiKey') !== where.apiKey || params.get('appName') !== where.appName) continue;
            frames[i].postMessage({ __hearthAuthEvent: event }, location.origin);
            delivered = true;
          } catch (error) {
            // a frame of another origin: not ours
          }
        }
      } catch (error) {
        delivered = false;
      }
      if (delivered) window.close();
      else say('The page that opened this window is gone. Close this window and try again.');
      return;
    }
    if (!where.redirectAllowed) {
      say(event.error ? event.error.message : 'Sign-in failed.');
      return;
    }
    try {
      sessionStorage.setItem('hearth:redirectEvent:' + where.apiKey + ':' + where.appName, JSON.stringify(event));
    } catch (error) {
      say('This browser does not allow session storage, which sign-in by redirect needs.');
      return;
    }
    location.replace(where.redirectUrl);
  }

  window.hearthDeliverAuthEvent = deliver;
  if (data.widget) return;
  if (data.refuse) {
    say(data.refuse);
    return;
  }
  deliver(data, data.event);
})();
