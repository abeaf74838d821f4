// Upload progress for the statement form of /dashboard/bank-accounts
// (docs/dashboard.md). Progressive enhancement: without this script the
// form posts as a plain form and the answer is the same page. With it, a
// file over the limit is refused before it is sent, the upload shows its
// progress (XMLHttpRequest upload events), and the answer replaces the page.
(function () {
  'use strict';
  if (window.reconUpload || !window.FormData || !window.XMLHttpRequest) {
    return;
  }
  window.reconUpload = true;

  function say(form, text, isError) {
    var out = form.querySelector('[data-upload-status]');
    out.textContent = text;
    out.className = isError ? 'error' : '';
    out.setAttribute('role', isError ? 'alert' : 'status');
  }

  document.addEventListener('submit', function (ev) {
    var form = ev.target;
    if (!form.hasAttribute || !form.hasAttribute('data-upload')) {
      return;
    }
    var input = form.querySelector('input[type=file]');
    var file = input && input.files && input.files[0];
    var max = Number(form.getAttribute('data-max-bytes'));
    if (!file) {
      return; // the browser's own "required" message, or the server's
    }
    ev.preventDefault();
    if (max && file.size > max) {
      say(form, form.getAttribute('data-too-large'), true);
      input.focus();
      return;
    }
    // The form's own attribute: form.action is shadowed by its buttons
    // named "action" (preview or import), a RadioNodeList.
    var action = new URL(form.getAttribute('action'), window.location.href).href;
    var bar = form.querySelector('progress');
    var button = form.querySelector('button[type=submit]');
    var xhr = new XMLHttpRequest();
    xhr.open('POST', action);
    xhr.responseType = 'document';
    xhr.upload.addEventListener('progress', function (e) {
      if (e.lengthComputable) {
        bar.max = e.total;
        bar.value = e.loaded;
        say(form, form.getAttribute('data-uploading') + ' ' + Math.floor(100 * e.loaded / e.total) + ' %', false);
      }
    });
    xhr.upload.addEventListener('load', function () {
      bar.value = bar.max;
      say(form, form.getAttribute('data-importing'), false);
    });
    xhr.addEventListener('load', function () {
      var doc = xhr.response;
      var path = xhr.responseURL ? new URL(xhr.responseURL).pathname : '';
      if (!doc || !doc.body || (path && path !== new URL(action).pathname)) {
        window.location.assign(xhr.responseURL || action); // signed out meanwhile: follow
        return;
      }
      document.title = doc.title;
      document.body.replaceWith(document.adoptNode(doc.body));
      var result = document.getElementById('upload-error') || document.getElementById('upload-busy') || document.getElementById('upload-done') || document.getElementById('preview');
      if (result) {
        result.setAttribute('tabindex', '-1');
        result.focus();
      }
    });
    xhr.addEventListener('error', function () {
      button.disabled = false;
      bar.hidden = true;
      say(form, form.getAttribute('data-failed'), true);
    });
    button.disabled = true;
    bar.hidden = false;
    bar.value = 0;
    say(form, form.getAttribute('data-uploading'), false);
    var data = new FormData(form);
    if (ev.submitter && ev.submitter.name) {
      data.append(ev.submitter.name, ev.submitter.value); // step: preview or import
    }
    xhr.send(data);
  });
}());
