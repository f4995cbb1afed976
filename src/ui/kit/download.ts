/** Saving bytes or text from the page as a file download (a temporary object URL on a clicked link). */

/** Downloads `data` as a file called `fileName`. */
export function downloadFile(fileName: string, data: string | Uint8Array, type: string): void {
  const blob = new Blob([typeof data === 'string' ? data : data.slice().buffer], { type });
  const link = document.createElement('a');
  link.href = URL.createObjectURL(blob);
  link.download = fileName;
  link.click();
  setTimeout(() => URL.revokeObjectURL(link.href), 1000);
}
