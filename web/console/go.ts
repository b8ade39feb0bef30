/**
 * Moves inside the console without loading it again: the shell draws the view of the new path on
 * popstate, as it does for the browser's back button.
 */
export function go(path: string): void {
  history.pushState(null, '', path);
  window.dispatchEvent(new PopStateEvent('popstate'));
}

/** Links marked data-go inside `target` move inside the console; a middle click or a new tab still loads the page. */
export function followInside(target: HTMLElement): void {
  target.querySelectorAll<HTMLAnchorElement>('a[data-go]').forEach((a) => a.addEventListener('click', (event) => {
    if (event.ctrlKey || event.metaKey || event.shiftKey || event.button !== 0) return;
    event.preventDefault();
    go(a.pathname);
  }));
}

/** The id after the view's name in the path (/console/threads/thr_…), if any. */
export const openedId = (): string | undefined => location.pathname.split('/')[3] || undefined;
