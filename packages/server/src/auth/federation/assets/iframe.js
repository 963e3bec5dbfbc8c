/*
 * Hearth's hosted auth iframe: answers the SDK (through gapi.js) and passes it auth events, from
 * the popup handler (same origin) or from a redirect (kept in this origin's session storage).
 */
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('hearth-data').textContent);
  var params = new URLSearchParams(location.search);
  var apiKey = params.get('apiKey') || '';
  var appName = params.get('appName') || '';
  var parentOrigin = (location.ancestorOrigins && location.ancestorOrigins[0]) || (document.referrer ? new URL(document.referrer).origin : '');
  if (!parentOrigin || parent === window) return;

  function authorized(origin) {
    var host = new URL(origin).hostname.toLowerCase();
    return data.authorizedDomains.some(function (domain) {
      var d = domain.toLowerCase();
      return host === d || (!/^[0-9.]+$/.test(d) && host.slice(-d.length - 1) === '.' + d);
    });
  }
  // Answers (with codes) go only to pages on an authorized domain; errors may go to any page.
  var parentAuthorized = authorized(parentOrigin);

  var storageKey = 'hearth:redirectEvent:' + apiKey + ':' + appName;
  var redirectEvent = null;
  try {
    redirectEvent = sessionStorage.getItem(storageKey);
    sessionStorage.removeItem(storageKey);
  } catch (error) {
    redirectEvent = null;
  }

  var nextId = 1;
  function post(message) {
    message.__hearthGapi = 1;
    parent.postMessage(message, parentOrigin);
  }
  function sendEvent(authEvent) {
    if (authEvent.urlResponse && !parentAuthorized) {
      authEvent = { type: authEvent.type, eventId: authEvent.eventId, urlResponse: null, sessionId: null, postBody: null, tenantId: null, error: { code: 'auth/unauthorized-domain', message: 'This domain is not authorized for OAuth operations.' } };
    }
    post({ kind: 'event', id: nextId++, name: 'authEvent', payload: { type: 'authEvent', authEvent: authEvent } });
  }
  function storageWorks() {
    try {
      sessionStorage.setItem('hearth:probe', '1');
      sessionStorage.removeItem('hearth:probe');
      return true;
    } catch (error) {
      return false;
    }
  }
  var noEvent = { type: 'unknown', eventId: null, urlResponse: null, sessionId: null, postBody: null, tenantId: null, error: { code: 'auth/no-auth-event', message: 'No auth event.' } };

  window.addEventListener('message', function (event) {
    var message = event.data;
    if (!message) return;
    if (event.source === parent && event.origin === parentOrigin && message.__hearthGapi === 1 && message.kind === 'call') {
      var result = [];
      if (message.name === 'register' && message.payload && message.payload.name === 'authEvent') {
        sendEvent(redirectEvent ? JSON.parse(redirectEvent) : noEvent);
        redirectEvent = null;
      } else if (message.name === 'webStorageSupport') {
        result = [{ webStorageSupport: storageWorks() }];
      }
      post({ kind: 'reply', id: message.id, result: result });
    } else if (event.origin === location.origin && message.__hearthAuthEvent) {
      sendEvent(message.__hearthAuthEvent);
    }
  });
  post({ kind: 'ready' });
})();
