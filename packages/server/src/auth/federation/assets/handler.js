/*
 * Hearth's hosted handler page, after the provider answered: hands the auth event to the app,
 * through the opener's Hearth iframe (popup) or this origin's session storage (redirect).
 */
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('hearth-data').textContent);
  var status = document.getElementById('status');
  function say(text) {
    status.textContent = text;
  }
  if (data.refuse) {
    say(data.refuse);
    return;
  }
  if (/Popup$/.test(data.authType)) {
    var delivered = false;
    try {
      var frames = window.opener ? window.opener.frames : [];
      for (var i = 0; i < frames.length; i++) {
        try {
          var where = frames[i].location;
          if (where.origin !== location.origin || !/\/auth\/iframe$/.test(where.pathname)) continue;
          var params = new URLSearchParams(where.search);
          if (params.get('apiKey') !== data.apiKey || params.get('appName') !== data.appName) continue;
          frames[i].postMessage({ __hearthAuthEvent: data.event }, location.origin);
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
  if (!data.redirectAllowed) {
    say(data.event.error ? data.event.error.message : 'Sign-in failed.');
    return;
  }
  try {
    sessionStorage.setItem('hearth:redirectEvent:' + data.apiKey + ':' + data.appName, JSON.stringify(data.event));
  } catch (error) {
    say('This browser does not allow session storage, which sign-in by redirect needs.');
    return;
  }
  location.replace(data.redirectUrl);
})();
