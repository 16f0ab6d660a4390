// The console's page-wide pieces: the error banner, the messages under forms, reading a
// chosen file, and running an admin request from a button.

/**
 * The element with this id: console.html has every one from the start. It is typed `any`,
 * as the page's own elements are: what the checker holds the pages to is the server's data.
 * @param {string} id
 * @returns {any}
 */
export const $ = (id) => document.getElementById(id);

export function errorText(what, err) {
  let text = `${what}: ${err.message}`;
  if (err.status === 401) text += ' Enter the admin token above.';
  if (err.status === 403) text += ' The token was refused.';
  if (err.status === 413) text += ' The upload is too large.';
  return text;
}

export function showError(what, err) {
  if (err.status === 401 || err.status === 403) $('token').focus();
  $('error').textContent = errorText(what, err);
  $('error').hidden = false;
}

/** A message under one of the round's forms (errors there stay next to the form). */
export function formMessage(node, text, isError = false) {
  node.textContent = text;
  node.classList.toggle('error-text', isError);
}

// The server takes request bodies up to 8 MiB.
const MAX_UPLOAD = 8 * 1024 * 1024;

/** The text of a chosen file, or an Error that says why not. */
export async function fileText(file) {
  if (file.size > MAX_UPLOAD) throw new Error(`${file.name} is larger than 8 MB, more than the server takes.`);
  try {
    return await file.text();
  } catch {
    throw new Error(`${file.name} could not be read.`);
  }
}

/** Runs an admin request with its button disabled; then `after`. True if it worked. */
export async function run(button, what, request, after) {
  button.disabled = true;
  try {
    await request();
    $('error').hidden = true;
  } catch (err) {
    showError(what, err);
    return false;
  } finally {
    button.disabled = false;
  }
  await after();
  return true;
}
