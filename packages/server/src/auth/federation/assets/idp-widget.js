/*
 * --dev: the Auth emulator's sign-in widget (idp-widget.ts renders the page). The developer picks
 * an account of this provider or makes one up; the answer goes to the SDK as the emulator's does
 * (the handler's URL with providerId and a made-up id_token), through handler.js's delivery.
 */
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('hearth-data').textContent);
  var providerName = data.providerId.charAt(0).toUpperCase() + data.providerId.slice(1);
  document.querySelectorAll('.js-provider-id').forEach(function (element) {
    element.textContent = providerName;
  });

  function madeUpRawId() {
    var digits = new Uint8Array(40);
    crypto.getRandomValues(digits);
    return Array.prototype.map.call(digits, function (byte) { return String(byte % 10); }).join('');
  }

  function finish(idToken, email) {
    var answer = location.origin + location.pathname + '?providerId=' + encodeURIComponent(data.providerId) + '&id_token=' + encodeURIComponent(idToken);
    if (/^saml\./.test(data.providerId)) {
      answer += '&SAMLResponse=' + encodeURIComponent(JSON.stringify({ assertion: { subject: { nameId: email } } }));
    }
    window.hearthDeliverAuthEvent(data, {
      type: data.authType,
      eventId: data.eventId,
      urlResponse: answer,
      sessionId: 'ValueNotUsedByAuthEmulator',
      postBody: '',
      tenantId: data.tenantId,
      error: null,
    });
  }

  // Accounts made up before: one click signs in as that identity again.
  var list = document.querySelector('#accounts-list ul');
  var addButton = document.getElementById('add-account-button');
  data.accounts.forEach(function (account) {
    var item = document.createElement('li');
    item.className = 'js-reuse-account';
    item.tabIndex = 0;
    var name = document.createElement('span');
    name.className = 'primary-text';
    name.textContent = account.displayName || '(No display name)';
    var email = document.createElement('span');
    email.className = 'secondary-text';
    email.textContent = account.email || '';
    item.appendChild(name);
    item.appendChild(email);
    item.addEventListener('click', function (event) {
      event.preventDefault();
      finish(account.idToken, account.email);
    });
    list.insertBefore(item, addButton);
  });
  if (!data.accounts.length) {
    document.querySelector('.js-accounts-help-text').textContent = 'No ' + providerName + ' accounts exist in the Auth Emulator.';
  }

  // The form for a new account (a global, as the emulator's page has it: test drivers wait for it).
  window.toggleForm = function (showForm) {
    document.getElementById('add-user').style.display = showForm ? 'block' : 'none';
    document.getElementById('accounts-list').style.display = showForm ? 'none' : 'block';
    if (showForm) document.getElementById('email-input').focus();
  };
  addButton.addEventListener('click', function (event) {
    event.preventDefault();
    window.toggleForm(true);
  });
  document.getElementById('back-button').addEventListener('click', function () {
    window.toggleForm(false);
  });

  var emailInput = document.getElementById('email-input');
  function validate() {
    var value = emailInput.value;
    var problem = !value ? 'Email required' : value.indexOf('@') < 0 ? 'Missing "@"' : '';
    document.getElementById('email-error').textContent = problem;
    document.getElementById('sign-in').disabled = problem !== '';
    return problem === '';
  }
  document.querySelectorAll('#main-form input').forEach(function (input) {
    input.addEventListener('input', validate);
  });

  document.getElementById('autogen-button').addEventListener('click', function () {
    var words = ['raccoon', 'olive', 'orange', 'heron', 'maple', 'otter', 'pebble', 'fern', 'lynx', 'comet'];
    var pick = function () { return words[Math.floor(Math.random() * words.length)]; };
    var given = pick();
    var family = pick();
    var title = function (word) { return word.charAt(0).toUpperCase() + word.slice(1); };
    emailInput.value = given + '.' + family + '.' + Math.floor(Math.random() * 1000) + '@example.com';
    document.getElementById('display-name-input').value = title(given) + ' ' + title(family);
    document.getElementById('screen-name-input').value = family + '_' + given;
    validate();
  });

  document.getElementById('main-form').addEventListener('submit', function (event) {
    event.preventDefault();
    if (!validate()) return;
    var claims = { sub: madeUpRawId(), iss: '', aud: '', exp: 0, iat: 0, email: emailInput.value, email_verified: true };
    var displayName = document.getElementById('display-name-input').value;
    var screenName = document.getElementById('screen-name-input').value;
    var photoUrl = document.getElementById('profile-photo-input').value;
    if (displayName) claims.name = displayName;
    if (screenName) claims.screen_name = screenName;
    if (photoUrl) claims.picture = photoUrl;
    finish(JSON.stringify(claims), claims.email);
  });
})();
