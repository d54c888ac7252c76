// Enter and Tab in a table's cell editor wait one timer turn, so no typed text is dropped.
//
// The cell editor of st.data_editor (glide-data-grid's overlay editor) has every key schedule a
// zero-delay timer, and Enter's timer commits the edit. A letter's timer still pending when Enter
// arrives (keys come faster than timers while the page redraws for a rerun) finds Enter's motion
// already set and finishes the edit with no value: the cell keeps its old content, and nothing is
// sent. Held back one turn, Enter reaches the editor after every earlier timer has run.
// glideapps/glide-data-grid#1201 describes the bug and the editor's own fix.
(() => {
  if (window.compactionPlaygroundCellEditorEnter) {
    return;
  }
  window.compactionPlaygroundCellEditorEnter = true;
  const resent = new WeakSet();  // the keys sent again, one turn later, go through
  window.addEventListener("keydown", (event) => {
    const commits = (event.key === "Enter" && !event.shiftKey) || event.key === "Tab";
    const editor = event.target instanceof Element && event.target.closest("[id^=gdg-overlay-]");
    if (resent.has(event) || event.isComposing || !commits || !editor) {
      return;
    }
    event.preventDefault();
    event.stopImmediatePropagation();
    const again = new KeyboardEvent("keydown", {
      key: event.key, code: event.code, shiftKey: event.shiftKey, altKey: event.altKey,
      ctrlKey: event.ctrlKey, metaKey: event.metaKey, bubbles: true, cancelable: true, composed: true,
    });
    resent.add(again);
    window.setTimeout(() => event.target.dispatchEvent(again), 0);
  }, true);
})();
