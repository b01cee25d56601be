// Shows the copy buttons next to read-only fields and copies on click. Without JavaScript (or
// clipboard access) the field's text is still there to select; the status line says which happened.
document.addEventListener('DOMContentLoaded', () => {
  for (const button of document.querySelectorAll('button[data-copy]')) {
    const field = document.getElementById(button.dataset.copy);
    const status = document.getElementById(`${button.dataset.copy}-copied`);
    button.hidden = false;
    button.addEventListener('click', () => {
      navigator.clipboard.writeText(field.value).then(
        () => {
          status.textContent = 'Copied to the clipboard.';
        },
        () => {
          field.select();
          status.textContent = 'Copying was not allowed: the secret is selected, copy it with your keyboard.';
        },
      );
    });
  }
});
